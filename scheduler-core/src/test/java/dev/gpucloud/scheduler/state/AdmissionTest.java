package dev.gpucloud.scheduler.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.scheduler.Fixtures;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.queue.TenantQuota;
import dev.gpucloud.scheduler.state.Admission.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which submissions are accepted, and why the others are not. */
class AdmissionTest {

    private final PlacementFramework framework = new PlacementFramework(Profile.defaults());
    private final Fleet fleet = new Fleet();
    private final JobQueue queue = new JobQueue();

    AdmissionTest() {
        fleet.upsert(Fixtures.mkHost("n1", "A100", 8), 0);
        queue.setQuota("capped", TenantQuota.gpus(4, 8));
    }

    private Admission.Refusal check(List<String> tenants, String tenant, int workers, int gpus, long admitted) {
        return Admission.check(tenants, tenant, Fixtures.mkJob(workers, gpus), admitted, queue, framework, fleet);
    }

    @Test
    void aJobThatFitsIsAdmitted() {
        assertThat(check(List.of(), "anyone", 1, 8, 0)).isNull();
        assertThat(Admission.milliGpus(Fixtures.mkJob(2, 4))).isEqualTo(8000);
    }

    @Test
    void anUnknownTenantIsRefusedFirst() {
        Admission.Refusal r = check(List.of("team-*", "ops"), "intruder", 9, 8, 0);

        assertThat(r.kind()).isEqualTo(Kind.UNKNOWN_TENANT);
        assertThat(r.message()).isEqualTo("unknown tenant 'intruder'");
    }

    @Test
    void aTenantOverItsHardQuotaIsRefusedCountingWhatTheSameGroupAdmitted() {
        assertThat(check(List.of(), "capped", 1, 8, 0)).isNull();

        Admission.Refusal r = check(List.of(), "capped", 1, 4, 6000);

        assertThat(r.kind()).isEqualTo(Kind.QUOTA);
        assertThat(r.message()).contains("capped");
    }

    @Test
    void aJobNoHostCouldEverRunIsRefused() {
        Admission.Refusal r = check(List.of(), "anyone", 1, 9, 0);

        assertThat(r.kind()).isEqualTo(Kind.UNSCHEDULABLE);
        assertThat(r.message()).startsWith("unschedulable: ");
    }

    @ParameterizedTest
    @CsvSource({"team-a, true", "team-, true", "ops, true", "opsx, false", "tea, false", "'', false"})
    void tenantsAreNamedOrMatchedByPrefix(String tenant, boolean known) {
        assertThat(Admission.knownTenant(List.of("team-*", "ops"), tenant)).isEqualTo(known);
        assertThat(Admission.knownTenant(List.of(), tenant)).as("an empty list admits all").isTrue();
    }

    @Test
    void aQuotaIsSoftSlashHardInGpus() {
        assertThat(Admission.parseQuota("k", " 4 / 8 ")).isEqualTo(TenantQuota.gpus(4, 8));
    }

    @ParameterizedTest
    @CsvSource({"8", "8/4", "a/b", "1/2/3", "-1/2"})
    void aBadQuotaNamesItsKeyAndValue(String value) {
        assertThatThrownBy(() -> Admission.parseQuota("gpucloud.scheduler.quota.team-a", value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("gpucloud.scheduler.quota.team-a must be 'soft/hard' in GPUs with soft <= hard (0 = none),"
                        + " was '" + value + "'");
    }
}
