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
 *   create=4                    nvmlDeviceCreateGpuInstanceWithPlacement answers this code (4: NO_PERMISSION, 23: INSUFFICIENT_RESOURCES)
 *   ci=23                       nvmlGpuInstanceCreateComputeInstance answers this code
 *   destroy=19                  nvmlComputeInstanceDestroy answers this code (19: NVML_ERROR_IN_USE)
 *   gpm=0                       nvmlGpmQueryDeviceSupport says the GPUs have no GPM
 * Default: 3 GPUs; GPU 0 and 1 joined by NVLink, GPU 1 in MIG mode with two instances
 * (3g.40gb, GPU instance 2, at slices 4-7; 1g.10gb, GPU instance 9, at slice 0), GPU 2 alone.
 * MIG instances can be created (with placement) and destroyed on GPU 1 by the H100 80GB profiles
 * and NVIDIA's placement rules. GPM per MIG instance: NVML_GPM_METRIC_GRAPHICS_UTIL between two
 * samples reads 5 + 10 x the GPU instance id percent (at most 100). Build with -DLEGACY_ONLY to leave out the optional
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
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_IN_USE 19
#define NVML_ERROR_INSUFFICIENT_RESOURCES 23
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
#define MIG_SLOTS 7
#define NVLINK_MAX 18

struct fake_device {
    int gpu;      /* the parent GPU's index */
    int mig;      /* -1 for the physical GPU, else the MIG slot */
};

/* A GPU instance (its handle is the struct's address), maybe with a compute instance: then it is a MIG device. */
struct fake_mig {
    int active;
    int has_ci;
    unsigned int gi_id, ci_id;
    int profile;                 /* index into gi_profiles */
    unsigned int start;
    unsigned long long mem_mib, used_mib;
    char uuid[96];
    struct fake_device dev;      /* the MIG device handle */
    int ci_tag;                  /* the compute instance handle points here */
};

/* The H100 80GB GPU-instance profiles: NVML_GPU_INSTANCE_PROFILE_* value, profile id, compute
 * slices, memory slices, memory MiB, name, NVML_COMPUTE_INSTANCE_PROFILE_* spanning it. */
struct gi_profile {
    unsigned int nvml_profile, id, slices, size;
    unsigned long long mem_mib;
    const char *name;
    unsigned int ci_profile;
};
static const struct gi_profile gi_profiles[] = {
    {0, 19, 1, 1, 9856, "1g.10gb", 0},
    {7, 20, 1, 1, 9856, "1g.10gb+me", 0},
    {9, 15, 1, 2, 19968, "1g.20gb", 0},
    {1, 14, 2, 2, 19968, "2g.20gb", 1},
    {2, 9, 3, 4, 40192, "3g.40gb", 2},
    {3, 5, 4, 4, 40192, "4g.40gb", 3},
    {4, 0, 7, 8, 80896, "7g.80gb", 4},
};
#define GI_PROFILES ((int)(sizeof gi_profiles / sizeof gi_profiles[0]))

static struct fake_device gpus[MAX_GPUS];
static struct fake_mig migs[MAX_GPUS][MIG_SLOTS];
static int initialized = 0;
static int gpu_count = 3;
static int lost_gpu = -1;
static int garbage_gpu = -1;
static char unsupported[32][64];
static int unsupported_count = 0;
static int init_code = 0;
static int create_code = 0, ci_code = 0, destroy_code = 0, gpm_enabled = 1, created_count = 0;
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

static int mig_mode(int gpu) { return gpu == 1; }

static void set_mig(int gpu, int slot, int profile, unsigned int gi_id, unsigned int start,
                    unsigned long long mem_mib, unsigned long long used_mib, const char *uuid) {
    struct fake_mig *m = &migs[gpu][slot];
    m->active = 1; m->has_ci = 1; m->gi_id = gi_id; m->ci_id = 0; m->profile = profile; m->start = start;
    m->mem_mib = mem_mib; m->used_mib = used_mib;
    snprintf(m->uuid, sizeof m->uuid, "%s", uuid);
}

static void reset_migs(void) {
    memset(migs, 0, sizeof migs);
    for (int g = 0; g < MAX_GPUS; g++)
        for (int s = 0; s < MIG_SLOTS; s++) { migs[g][s].dev.gpu = g; migs[g][s].dev.mig = s; }
    set_mig(1, 0, 4, 2, 4, 40192, 1000, "MIG-00000001-0000-2222-3333-444444444444");
    set_mig(1, 1, 0, 9, 0, 9984, 10, "MIG-00000001-0001-2222-3333-444444444444");
    created_count = 0;
}

static void load_scenario(void) {
    gpu_count = 3; lost_gpu = -1; garbage_gpu = -1; unsupported_count = 0; init_code = 0;
    create_code = 0; ci_code = 0; destroy_code = 0; gpm_enabled = 1;
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
        else if (!strcmp(key, "create")) create_code = atoi(value);
        else if (!strcmp(key, "ci")) ci_code = atoi(value);
        else if (!strcmp(key, "destroy")) destroy_code = atoi(value);
        else if (!strcmp(key, "gpm")) gpm_enabled = atoi(value);
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
    for (int i = 0; i < MAX_GPUS; i++) { gpus[i].gpu = i; gpus[i].mig = -1; }
    reset_migs();
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
        case 4: return "Insufficient Permissions";
        case 6: return "Not Found";
        case 7: return "Insufficient Size";
        case 19: return "In use by another client";
        case 23: return "Insufficient resources";
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
    else snprintf(value, sizeof value, "%s MIG %s", names[d->gpu], gi_profiles[migs[d->gpu][d->mig].profile].name);
    return copy_string(value, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(struct fake_device *d, char *uuid, unsigned int length) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetUUID");
    if (r) return r;
    if (d->gpu == garbage_gpu && d->mig < 0) { fill_garbage(uuid, length); return NVML_SUCCESS; }
    char value[96];
    if (d->mig < 0) snprintf(value, sizeof value, "GPU-0000000%d-1111-2222-3333-444444444444", d->gpu);
    else snprintf(value, sizeof value, "%s", migs[d->gpu][d->mig].uuid);
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
        memory->total = migs[d->gpu][d->mig].mem_mib * mib;
        memory->reserved = 0;
        memory->used = migs[d->gpu][d->mig].used_mib * mib;
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
    *currentMode = *pendingMode = mig_mode(d->gpu) ? 1 : 0;
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
    if (!mig_mode(d->gpu) || d->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned int seen = 0;
    for (int s = 0; s < MIG_SLOTS; s++) {
        if (!migs[d->gpu][s].active || !migs[d->gpu][s].has_ci) continue;
        if (seen++ == index) { *mig = &migs[d->gpu][s].dev; return NVML_SUCCESS; }
    }
    return NVML_ERROR_NOT_FOUND; /* an empty slot */
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(struct fake_device *d, unsigned int *id) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetGpuInstanceId");
    if (r) return r;
    if (d->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
    *id = migs[d->gpu][d->mig].gi_id;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(struct fake_device *d, unsigned int *id) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetComputeInstanceId");
    if (r) return r;
    if (d->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
    *id = migs[d->gpu][d->mig].ci_id;
    return NVML_SUCCESS;
}

/* ---- MIG GPU and compute instances ---- */

typedef struct { unsigned int start, size; } nvmlGpuInstancePlacement_t;
typedef struct {
    unsigned int id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount,
        decoderCount, encoderCount, jpegCount, ofaCount;
    unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;
typedef struct {
    struct fake_device *device;
    unsigned int id, profileId;
    nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;
typedef struct {
    unsigned int id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount,
        sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

/* The GPU instance a handle points at, or NULL when it is not one (or no longer exists). */
static struct fake_mig *gpu_instance(void *handle) {
    for (int g = 0; g < MAX_GPUS; g++)
        for (int s = 0; s < MIG_SLOTS; s++)
            if ((void *)&migs[g][s] == handle && migs[g][s].active) return &migs[g][s];
    return NULL;
}

static struct fake_mig *compute_instance(void *handle) {
    for (int g = 0; g < MAX_GPUS; g++)
        for (int s = 0; s < MIG_SLOTS; s++)
            if ((void *)&migs[g][s].ci_tag == handle && migs[g][s].active && migs[g][s].has_ci) return &migs[g][s];
    return NULL;
}

static int profile_by_id(unsigned int id) {
    for (int p = 0; p < GI_PROFILES; p++) if (gi_profiles[p].id == id) return p;
    return -1;
}

/* NVIDIA's placement rules: 1 slice at 0..6; 2 slices at even starts (a 2g not at 6); 4 at 0 or 4 (a 4g only 0); 8 at 0. */
static int placement_allowed(int p, unsigned int start) {
    unsigned int size = gi_profiles[p].size;
    if (start + size > 8) return 0;
    if (size == 1) return start <= 6;
    if (start % size != 0) return 0;
    if (gi_profiles[p].slices == 2 && start == 6) return 0;
    if (gi_profiles[p].slices == 4 && start != 0) return 0;
    return 1;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(struct fake_device *d, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t *info) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetGpuInstanceProfileInfo");
    if (r) return r;
    if (d->mig >= 0 || info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (d->gpu >= 2) return NVML_ERROR_NOT_SUPPORTED; /* an A10G has no MIG */
    for (int p = 0; p < GI_PROFILES; p++) {
        if (gi_profiles[p].nvml_profile != profile) continue;
        memset(info, 0, sizeof *info);
        info->id = gi_profiles[p].id;
        info->sliceCount = gi_profiles[p].slices;
        info->instanceCount = gi_profiles[p].size == 1 ? 7 : 8 / gi_profiles[p].size;
        info->multiprocessorCount = 16 * gi_profiles[p].slices;
        info->memorySizeMB = gi_profiles[p].mem_mib;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(struct fake_device *d, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t *placement,
                                                      struct fake_mig **gpuInstance) {
    nvmlReturn_t r = check(d, "nvmlDeviceCreateGpuInstanceWithPlacement");
    if (r) return r;
    if (create_code) return create_code;
    if (d->mig >= 0 || placement == NULL || gpuInstance == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig_mode(d->gpu)) return NVML_ERROR_NOT_SUPPORTED;
    int p = profile_by_id(profileId);
    if (p < 0 || placement->size != gi_profiles[p].size || !placement_allowed(p, placement->start))
        return NVML_ERROR_INVALID_ARGUMENT;
    int free_slot = -1;
    for (int s = 0; s < MIG_SLOTS; s++) {
        struct fake_mig *m = &migs[d->gpu][s];
        if (!m->active) { if (free_slot < 0) free_slot = s; continue; }
        unsigned int size = gi_profiles[m->profile].size;
        if (m->start < placement->start + placement->size && placement->start < m->start + size)
            return NVML_ERROR_INSUFFICIENT_RESOURCES;
    }
    if (free_slot < 0) return NVML_ERROR_INSUFFICIENT_RESOURCES;
    unsigned int id = 1;
    for (int again = 1; again;) {
        again = 0;
        for (int s = 0; s < MIG_SLOTS; s++)
            if (migs[d->gpu][s].active && migs[d->gpu][s].gi_id == id) { id++; again = 1; }
    }
    char uuid[96];
    snprintf(uuid, sizeof uuid, "MIG-0000000%d-1%03d-2222-3333-444444444444", d->gpu, ++created_count);
    set_mig(d->gpu, free_slot, p, id, placement->start, gi_profiles[p].mem_mib, 0, uuid);
    migs[d->gpu][free_slot].has_ci = 0;
    *gpuInstance = &migs[d->gpu][free_slot];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(struct fake_device *d, unsigned int id, struct fake_mig **gpuInstance) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetGpuInstanceById");
    if (r) return r;
    if (d->mig >= 0 || gpuInstance == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig_mode(d->gpu)) return NVML_ERROR_NOT_SUPPORTED;
    for (int s = 0; s < MIG_SLOTS; s++)
        if (migs[d->gpu][s].active && migs[d->gpu][s].gi_id == id) { *gpuInstance = &migs[d->gpu][s]; return NVML_SUCCESS; }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(void *handle, nvmlGpuInstanceInfo_t *info) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (is_unsupported("nvmlGpuInstanceGetInfo")) return NVML_ERROR_NOT_SUPPORTED;
    struct fake_mig *m = gpu_instance(handle);
    if (m == NULL || info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    info->device = &gpus[m->dev.gpu];
    info->id = m->gi_id;
    info->profileId = gi_profiles[m->profile].id;
    info->placement.start = m->start;
    info->placement.size = gi_profiles[m->profile].size;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(void *handle, unsigned int profile, unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t *info) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    struct fake_mig *m = gpu_instance(handle);
    if (m == NULL || info == NULL || engProfile != 0) return NVML_ERROR_INVALID_ARGUMENT;
    if (profile != gi_profiles[m->profile].ci_profile) return NVML_ERROR_NOT_SUPPORTED;
    memset(info, 0, sizeof *info);
    info->id = profile;
    info->sliceCount = gi_profiles[m->profile].slices;
    info->instanceCount = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(void *handle, unsigned int profileId, int **computeInstance) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (ci_code) return ci_code;
    struct fake_mig *m = gpu_instance(handle);
    if (m == NULL || computeInstance == NULL || profileId != gi_profiles[m->profile].ci_profile)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (m->has_ci) return NVML_ERROR_INSUFFICIENT_RESOURCES;
    m->has_ci = 1;
    m->ci_id = 0;
    *computeInstance = &m->ci_tag;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(void *handle, unsigned int id, int **computeInstance) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    struct fake_mig *m = gpu_instance(handle);
    if (m == NULL || computeInstance == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!m->has_ci || m->ci_id != id) return NVML_ERROR_NOT_FOUND;
    *computeInstance = &m->ci_tag;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceDestroy(void *handle) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (destroy_code) return destroy_code;
    struct fake_mig *m = compute_instance(handle);
    if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    m->has_ci = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceDestroy(void *handle) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    struct fake_mig *m = gpu_instance(handle);
    if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (m->has_ci) return NVML_ERROR_IN_USE;
    m->active = 0;
    return NVML_SUCCESS;
}

/* ---- GPM: per-MIG samples and the graphics-engine activity between two of them ---- */

#define NVML_GPM_METRIC_MAX 333
typedef struct { unsigned int magic; int gpu; unsigned int gi_id; unsigned long long seq; } fake_gpm_sample;
typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct { char *shortName, *longName, *unit; } metricInfo;
} nvmlGpmMetric_t;
typedef struct {
    unsigned int version, numMetrics;
    fake_gpm_sample *sample1, *sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
typedef struct { unsigned int version, isSupportedDevice; } nvmlGpmSupport_t;
#define GPM_MAGIC 0x67706d31U
static unsigned long long gpm_seq = 0;
static int gpm_live = 0;

/* How many GPM sample buffers are allocated and not yet freed (for leak checks in tests). */
int fakeNvmlGpmSamplesLive(void) { return gpm_live; }

nvmlReturn_t nvmlGpmQueryDeviceSupport(struct fake_device *d, nvmlGpmSupport_t *support) {
    nvmlReturn_t r = check(d, "nvmlGpmQueryDeviceSupport");
    if (r) return r;
    if (support == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (support->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    support->isSupportedDevice = gpm_enabled && d->gpu < 2 ? 1U : 0U; /* the H100s have GPM, the A10Gs not */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(fake_gpm_sample **sample) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (sample == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    fake_gpm_sample *s = calloc(1, sizeof *s);
    if (s == NULL) return 20; /* NVML_ERROR_MEMORY */
    s->magic = GPM_MAGIC;
    gpm_live++;
    *sample = s;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(fake_gpm_sample *sample) {
    if (sample == NULL || sample->magic != GPM_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
    sample->magic = 0;
    free(sample);
    gpm_live--;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMigSampleGet(struct fake_device *d, unsigned int gpuInstanceId, fake_gpm_sample *sample) {
    nvmlReturn_t r = check(d, "nvmlGpmMigSampleGet");
    if (r) return r;
    if (d->mig >= 0 || sample == NULL || sample->magic != GPM_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpm_enabled || d->gpu >= 2) return NVML_ERROR_NOT_SUPPORTED;
    for (int s = 0; s < MIG_SLOTS; s++) {
        if (migs[d->gpu][s].active && migs[d->gpu][s].gi_id == gpuInstanceId) {
            sample->gpu = d->gpu; sample->gi_id = gpuInstanceId; sample->seq = ++gpm_seq;
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *get) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (get == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (get->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    fake_gpm_sample *a = get->sample1, *b = get->sample2;
    if (get->numMetrics < 1 || get->numMetrics > NVML_GPM_METRIC_MAX || a == NULL || b == NULL
        || a->magic != GPM_MAGIC || b->magic != GPM_MAGIC || a->seq == 0 || b->seq == 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (a->seq >= b->seq || a->gpu != b->gpu || a->gi_id != b->gi_id) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < get->numMetrics; i++) {
        nvmlGpmMetric_t *m = &get->metrics[i];
        if (m->metricId == 1) { /* NVML_GPM_METRIC_GRAPHICS_UTIL */
            unsigned int percent = 5 + 10 * b->gi_id;
            m->value = percent > 100 ? 100.0 : (double)percent;
            m->nvmlReturn = NVML_SUCCESS;
        } else {
            m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
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
