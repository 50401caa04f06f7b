package dev.gpucloud.autoscaler.provider.aws;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import dev.gpucloud.autoscaler.provider.aws.Ec2StandIn.Call;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
/**
 * Release and listing through the real AWS SDK over real HTTP: hosts are found by the fleet tag, page by page, and
 * released in batches, unknown ids passed over.
 */
class Ec2ProviderInventoryTest extends Ec2StandInCase {

    @Test
    void release_terminates_and_a_second_release_of_the_same_ids_is_fine() {
        List<String> ids = ids(provider.launch(mkSpot("req-1", 3, A)));

        provider.release(ids);
        assertThat(provider.instances()).isEmpty();
        assertThat(ec2.fleet().instances()).extracting(i -> i.state).containsOnly("terminated");

        provider.release(ids);
        assertThat(ec2.calls("TerminateInstances")).hasSize(2);
    }

    @Test
    void release_passes_over_ids_ec2_does_not_know() {
        List<String> ids = ids(provider.launch(mkSpot("req-1", 2, A)));

        provider.release(List.of(ids.get(0), "i-0000000000deadbee", ids.get(1), "i-0000000000badf00d"));

        assertThat(provider.instances()).isEmpty();
        List<Call> terminations = ec2.calls("TerminateInstances");
        assertThat(terminations).hasSize(2);
        assertThat(Ec2StandInFleet.values(terminations.get(1).params(), "InstanceId")).containsExactlyElementsOf(ids);
    }

    @Test
    void release_sends_at_most_a_thousand_ids_a_call() {
        List<String> ids = ids(provider.launch(mkSpot("req-1", 2500, A)));

        provider.release(ids);

        assertThat(ec2.calls("TerminateInstances")).extracting(c -> Ec2StandInFleet.values(c.params(), "InstanceId").size())
                .containsExactly(1000, 1000, 500);
        assertThat(provider.instances()).isEmpty();
    }

    @Test
    void instances_pages_through_the_fleet_and_leaves_out_the_terminated_and_other_fleets() {
        ec2.fleet().pageSize(2);
        List<String> ours = ids(provider.launch(mkSpot("req-1", 5, A, B)));
        mkProvider("someone-else").launch(mkSpot("req-2", 2, A));
        provider.release(List.of(ours.get(0)));
        ec2.throttleNext(1);

        List<ProviderInstance> listed = provider.instances();

        assertThat(listed).extracting(ProviderInstance::instanceId).containsExactlyInAnyOrderElementsOf(ours.subList(1, 5));
        assertThat(listed).allSatisfy(i -> {
            assertThat(i.state()).isEqualTo(ProviderInstance.State.RUNNING);
            assertThat(i.pool()).isEqualTo("train");
            assertThat(i.capacity()).isEqualTo(Capacity.SPOT);
            assertThat(i.zone()).isIn(A, B);
        });
        List<Call> pages = ec2.calls("DescribeInstances");
        assertThat(pages).hasSize(3); // the first throttled, retried, then the second page
        assertThat(pages.get(0).params()).isEqualTo(pages.get(1).params());
        pages = pages.subList(1, 3);
        assertThat(pages.get(0).params()).doesNotContainKey("NextToken")
                .contains(Map.entry("Filter.1.Name", "tag:gpucloud:fleet"), Map.entry("Filter.1.Value.1", "gpu-east"));
        assertThat(pages.get(1).params()).containsKey("NextToken");
    }

    @Test
    void a_leaked_instance_shows_in_instances_so_the_reconciler_can_terminate_it() {
        provider.launch(mkSpot("req-lost", 2, A)); // the caller crashed before it recorded the outcome
        Set<String> known = Set.of();

        List<String> unknown = provider.instances().stream()
                .map(ProviderInstance::instanceId)
                .filter(id -> !known.contains(id))
                .toList();
        assertThat(unknown).hasSize(2);
        provider.release(unknown);

        assertThat(provider.instances()).isEmpty();
    }

}
