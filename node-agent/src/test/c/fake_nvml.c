/*
 * A fake libnvidia-ml for tests: it exports the NVML symbols the agent binds, with NVML's real
 * signatures, constants and struct layouts, and answers with scripted values. It reads
 * "scenario.txt" next to itself at nvmlInit_v2 (one "key=value" a line):
 *   init=9                      nvmlInit_v2 returns this code (9: NVML_ERROR_DRIVER_NOT_LOADED)
 *   gpus=3                      how many GPUs (at most 8; GPUs 2..7 are A10Gs)
 *   lost=1                      this GPU index answers NVML_ERROR_GPU_IS_LOST to every device query
 *   unsupported=nvmlDeviceGetPowerUsage   this symbol answers NVML_ERROR_NOT_SUPPORTED (repeatable)
 *   garbage=0                   this GPU's name and UUID fill the whole buffer, unterminated, with bytes that are not UTF-8
 *   xid=0:79                    an XID critical error event (GPU 0, XID 79) waits in the event set, delivered once (repeatable)
 * Default: 3 GPUs; GPU 0 and 1 joined by NVLink, GPU 1 in MIG mode with two instances
 * (3g.40gb and 1g.10gb), GPU 2 alone. Build with -DLEGACY_ONLY to leave out the optional
 * symbols nvmlDeviceGetTemperatureV and nvmlDeviceGetTotalEnergyConsumption.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2 << 24U)))

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

typedef struct {
    unsigned int version;
    int sensorType;
    int temperature;
} nvmlTemperature_v1_t;
#define nvmlTemperature_v1 ((unsigned int)(sizeof(nvmlTemperature_v1_t) | (1 << 24U)))

#define MAX_GPUS 8
#define MIG_PER_GPU 2
#define NVLINK_MAX 18

struct fake_device {
    int gpu;      /* the parent GPU's index */
    int mig;      /* -1 for the physical GPU, else the MIG slot */
};

static struct fake_device gpus[MAX_GPUS];
static struct fake_device migs[MAX_GPUS][MIG_PER_GPU];
static int initialized = 0;
static int gpu_count = 3;
static int lost_gpu = -1;
static int garbage_gpu = -1;
static char unsupported[32][64];
static int unsupported_count = 0;
static int init_code = 0;
#define MAX_XIDS 8
static int xid_gpu[MAX_XIDS], xid_code[MAX_XIDS];
static int xid_count = 0, xid_next = 0;
static unsigned long long registered_events[MAX_GPUS];

static const char *names[MAX_GPUS] = {
    "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA A10G", "NVIDIA A10G",
    "NVIDIA A10G", "NVIDIA A10G", "NVIDIA A10G", "NVIDIA A10G"};
static const char *bus_ids[MAX_GPUS] = {
    "00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:4A:00.0",
    "00000000:5A:00.0", "00000000:6A:00.0", "00000000:7A:00.0", "00000000:8A:00.0"};
static const char *mig_profiles[MIG_PER_GPU] = {"3g.40gb", "1g.10gb"};
static const unsigned long long mig_mem_mib[MIG_PER_GPU] = {40192, 9984};

static void load_scenario(void) {
    gpu_count = 3; lost_gpu = -1; garbage_gpu = -1; unsupported_count = 0; init_code = 0;
    xid_count = 0; xid_next = 0; memset(registered_events, 0, sizeof registered_events);
    Dl_info info;
    if (!dladdr((void *)load_scenario, &info) || info.dli_fname == NULL) return;
    char path[4096];
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash = strrchr(path, '/');
    if (slash == NULL) return;
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "scenario.txt");
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *eq = strchr(line, '=');
        if (eq == NULL) continue;
        *eq = 0;
        const char *key = line, *value = eq + 1;
        if (!strcmp(key, "init")) init_code = atoi(value);
        else if (!strcmp(key, "gpus")) gpu_count = atoi(value) > MAX_GPUS ? MAX_GPUS : atoi(value);
        else if (!strcmp(key, "lost")) lost_gpu = atoi(value);
        else if (!strcmp(key, "garbage")) garbage_gpu = atoi(value);
        else if (!strcmp(key, "xid") && xid_count < MAX_XIDS && strchr(value, ':') != NULL) {
            xid_gpu[xid_count] = atoi(value); xid_code[xid_count] = atoi(strchr(value, ':') + 1); xid_count++;
        }
        else if (!strcmp(key, "unsupported") && unsupported_count < 32)
            snprintf(unsupported[unsupported_count++], 64, "%s", value);
    }
    fclose(f);
}

static int is_unsupported(const char *symbol) {
    for (int i = 0; i < unsupported_count; i++)
        if (!strcmp(unsupported[i], symbol)) return 1;
    return 0;
}

/* Checks the handle and the scenario; returns a code to answer with, or NVML_SUCCESS. */
static nvmlReturn_t check(const struct fake_device *d, const char *symbol) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (d == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (d->gpu == lost_gpu) return NVML_ERROR_GPU_IS_LOST;
    if (is_unsupported(symbol)) return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_string(const char *value, char *out, unsigned int length) {
    if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, value, strlen(value) + 1);
    return NVML_SUCCESS;
}

static void fill_garbage(char *out, unsigned int length) {
    /* "GPU" then bytes that are not UTF-8, and no terminator anywhere in the buffer. */
    for (unsigned int i = 0; i < length; i++) out[i] = (char)(i < 3 ? (unsigned int)"GPU"[i] : 0xC0U + (i % 0x3FU));
}

nvmlReturn_t nvmlInit_v2(void) {
    load_scenario();
    if (init_code != 0) return init_code;
    for (int i = 0; i < MAX_GPUS; i++) {
        gpus[i].gpu = i; gpus[i].mig = -1;
        for (int m = 0; m < MIG_PER_GPU; m++) { migs[i][m].gpu = i; migs[i][m].mig = m; }
    }
    initialized = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    initialized = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
        case 0: return "Success";
        case 1: return "Uninitialized";
        case 2: return "Invalid Argument";
        case 3: return "Not Supported";
        case 7: return "Insufficient Size";
        case 9: return "Driver Not Loaded";
        case 15: return "GPU is lost";
        case 25: return "Argument version mismatch";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    return copy_string("550.54.15", version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    *count = (unsigned int)gpu_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, struct fake_device **device) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (index >= (unsigned int)gpu_count || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(struct fake_device *d, char *name, unsigned int length) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetName");
    if (r) return r;
    if (d->gpu == garbage_gpu && d->mig < 0) { fill_garbage(name, length); return NVML_SUCCESS; }
    char value[96];
    if (d->mig < 0) snprintf(value, sizeof value, "%s", names[d->gpu]);
    else snprintf(value, sizeof value, "%s MIG %s", names[d->gpu], mig_profiles[d->mig]);
    return copy_string(value, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(struct fake_device *d, char *uuid, unsigned int length) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetUUID");
    if (r) return r;
    if (d->gpu == garbage_gpu && d->mig < 0) { fill_garbage(uuid, length); return NVML_SUCCESS; }
    char value[96];
    if (d->mig < 0) snprintf(value, sizeof value, "GPU-0000000%d-1111-2222-3333-444444444444", d->gpu);
    else snprintf(value, sizeof value, "MIG-0000000%d-000%d-2222-3333-444444444444", d->gpu, d->mig);
    return copy_string(value, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(struct fake_device *d, nvmlPciInfo_t *pci) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetPciInfo_v3");
    if (r) return r;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", bus_ids[d->gpu] + 4);
    pci->domain = 0; pci->bus = (unsigned int)strtoul(bus_ids[d->gpu] + 9, NULL, 16);
    pci->pciDeviceId = 0x233010DE; pci->pciSubSystemId = 0x16C110DE;
    snprintf(pci->busId, sizeof pci->busId, "%s", bus_ids[d->gpu]);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(struct fake_device *d, nvmlMemory_v2_t *memory) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMemoryInfo_v2");
    if (r) return r;
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const unsigned long long mib = 1024ULL * 1024ULL;
    if (d->mig >= 0) {
        memory->total = mig_mem_mib[d->mig] * mib;
        memory->reserved = 0;
        memory->used = (d->mig == 0 ? 1000ULL : 10ULL) * mib;
    } else {
        memory->total = (d->gpu < 2 ? 81559ULL : 23028ULL) * mib;
        memory->reserved = 512ULL * mib;
        memory->used = (1000ULL + 1000ULL * (unsigned long long)d->gpu) * mib;
    }
    memory->free = memory->total - memory->reserved - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(struct fake_device *d, nvmlUtilization_t *util) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetUtilizationRates");
    if (r) return r;
    if (d->gpu == 1) return NVML_ERROR_NOT_SUPPORTED; /* as on a real GPU in MIG mode */
    util->gpu = 40 + 10 * (unsigned int)d->gpu;
    util->memory = 20 + (unsigned int)d->gpu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(struct fake_device *d, int sensorType, unsigned int *temp) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetTemperature");
    if (r) return r;
    if (sensorType != 0) return NVML_ERROR_INVALID_ARGUMENT;
    *temp = 50 + (unsigned int)d->gpu;
    return NVML_SUCCESS;
}

#ifndef LEGACY_ONLY
nvmlReturn_t nvmlDeviceGetTemperatureV(struct fake_device *d, nvmlTemperature_v1_t *temperature) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetTemperatureV");
    if (r) return r;
    if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temperature->sensorType != 0) return NVML_ERROR_INVALID_ARGUMENT;
    temperature->temperature = 60 + d->gpu; /* differs from the legacy call, so tests see which answered */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(struct fake_device *d, unsigned long long *energy) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetTotalEnergyConsumption");
    if (r) return r;
    *energy = 123456789ULL + (unsigned long long)d->gpu;
    return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetPowerUsage(struct fake_device *d, unsigned int *power) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetPowerUsage");
    if (r) return r;
    *power = 250500 + 1000 * (unsigned int)d->gpu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(struct fake_device *d, int type, unsigned int *clock) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetClockInfo");
    if (r) return r;
    if (type == 1) *clock = 1980; /* NVML_CLOCK_SM */
    else if (type == 2) *clock = 2619; /* NVML_CLOCK_MEM */
    else return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(struct fake_device *d, int errorType, int counterType,
                                         unsigned long long *count) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetTotalEccErrors");
    if (r) return r;
    if (counterType != 0) return NVML_ERROR_INVALID_ARGUMENT; /* the agent reads volatile counts */
    *count = errorType == 0 ? 7ULL : 1ULL;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(struct fake_device *d, unsigned int *currentMode, unsigned int *pendingMode) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMigMode");
    if (r) return r;
    if (d->gpu >= 2) return NVML_ERROR_NOT_SUPPORTED; /* an A10G has no MIG */
    *currentMode = *pendingMode = d->gpu == 1 ? 1 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(struct fake_device *d, unsigned int *count) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMaxMigDeviceCount");
    if (r) return r;
    *count = 7;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(struct fake_device *d, unsigned int index,
                                                 struct fake_device **mig) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMigDeviceHandleByIndex");
    if (r) return r;
    if (d->gpu != 1 || d->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= MIG_PER_GPU) return 6; /* NVML_ERROR_NOT_FOUND: an empty slot */
    *mig = &migs[d->gpu][index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(struct fake_device *d, unsigned int *id) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetGpuInstanceId");
    if (r) return r;
    if (d->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
    *id = d->mig == 0 ? 2U : 9U;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(struct fake_device *d, unsigned int link, unsigned int *isActive) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetNvLinkState");
    if (r) return r;
    if (link >= NVLINK_MAX) return NVML_ERROR_INVALID_ARGUMENT;
    if (d->gpu >= 2) return NVML_ERROR_NOT_SUPPORTED;
    *isActive = link < 4 ? 1U : 0U;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(struct fake_device *d, unsigned int link, nvmlPciInfo_t *pci) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    if (r) return r;
    if (link >= 4 || d->gpu >= 2) return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", bus_ids[d->gpu == 0 ? 1 : 0]);
    return NVML_SUCCESS;
}

/* Event sets: one static set; XID events from the scenario are handed out once each, in order. */
#define NVML_ERROR_TIMEOUT 10
#define nvmlEventTypeXidCriticalError 0x0000000000000008LL
typedef struct {
    struct fake_device *device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;
static int the_event_set = 42;

nvmlReturn_t nvmlEventSetCreate(void **set) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (set == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (is_unsupported("nvmlEventSetCreate")) return NVML_ERROR_NOT_SUPPORTED;
    *set = &the_event_set;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(struct fake_device *d, unsigned long long eventTypes, void *set) {
    nvmlReturn_t r = check(d, "nvmlDeviceRegisterEvents");
    if (r != NVML_SUCCESS) return r;
    if (set != &the_event_set) return NVML_ERROR_INVALID_ARGUMENT;
    registered_events[d->gpu] |= eventTypes;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(void *set, nvmlEventData_t *data, unsigned int timeoutms) {
    (void)timeoutms;
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (set != &the_event_set || data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    while (xid_next < xid_count) {
        int g = xid_gpu[xid_next], code = xid_code[xid_next];
        xid_next++;
        if (g < 0 || g >= gpu_count || !(registered_events[g] & nvmlEventTypeXidCriticalError)) continue;
        data->device = &gpus[g];
        data->eventType = nvmlEventTypeXidCriticalError;
        data->eventData = (unsigned long long)code;
        data->gpuInstanceId = 0xFFFFFFFFU;
        data->computeInstanceId = 0xFFFFFFFFU;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(void *set) {
    return set == &the_event_set ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
