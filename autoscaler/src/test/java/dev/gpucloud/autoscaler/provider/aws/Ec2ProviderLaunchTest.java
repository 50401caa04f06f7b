package dev.gpucloud.autoscaler.provider.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.LaunchOutcome.LaunchError;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import dev.gpucloud.autoscaler.provider.aws.Ec2ProviderConfig.LaunchTemplate;
import dev.gpucloud.autoscaler.provider.aws.Ec2StandIn.Call;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
/**
 * Launches through the real AWS SDK over real HTTP, against the stand-in: what comes back in each capacity
 * situation, and what went over the wire for it.
 */
class Ec2ProviderLaunchTest extends Ec2StandInCase {

    @Test
    void a_spot_launch_of_n_is_fulfilled_by_one_instant_capacity_optimized_fleet() {
        LaunchOutcome outcome = provider.launch(mkSpot("req-1", 4, A, B));

        assertThat(outcome.errors()).isEmpty();
        assertThat(outcome.launched()).hasSize(4).allSatisfy(i -> {
            assertThat(i.capacity()).isEqualTo(Capacity.SPOT);
            assertThat(i.state()).isEqualTo(ProviderInstance.State.PENDING);
            assertThat(i.pool()).isEqualTo("train");
            assertThat(i.instanceType()).isEqualTo("p5.48xlarge");
            assertThat(i.zone()).isIn(A, B);
        });

        Call call = single("CreateFleet");
        assertThat(call.params()).contains(
                Map.entry("Type", "instant"),
                Map.entry("ClientToken", "req-1"),
                Map.entry("SpotOptions.AllocationStrategy", "capacity-optimized"),
                Map.entry("TargetCapacitySpecification.TotalTargetCapacity", "4"),
                Map.entry("TargetCapacitySpecification.DefaultTargetCapacityType", "spot"),
                Map.entry("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId", "lt-0abc"),
                Map.entry("LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version", "3"));
        var overrides = Ec2StandInFleet.members(Ec2StandInFleet.members(call.params(), "LaunchTemplateConfigs").get(0), "Overrides");
        assertThat(overrides).extracting(o -> o.get("SubnetId"), o -> o.get("InstanceType"))
                .containsExactly(tuple("subnet-a", "p5.48xlarge"), tuple("subnet-b", "p5.48xlarge"));
        assertThat(instanceTags(call)).containsEntry("gpucloud:fleet", "gpu-east").containsEntry("gpucloud:pool", "train")
                .containsEntry("gpucloud:request", "req-1").containsEntry("team", "vision");
        assertThat(ec2.fleet().instances()).hasSize(4)
                .allSatisfy(i -> assertThat(i.tags).containsEntry("gpucloud:fleet", "gpu-east"));
    }

    @Test
    void an_instance_type_with_a_template_of_its_own_launches_from_it() {
        var config = new Ec2ProviderConfig("gpu-east", LaunchTemplate.byId("lt-0abc"),
                Map.of("p5.48xlarge", LaunchTemplate.byName("gpucloud-p5").atVersion("$Latest")), Map.of(A, "subnet-a"));

        new Ec2Provider(client, config).launch(mkSpot("req-1", 1));

        assertThat(single("CreateFleet").params()).contains(
                Map.entry("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName", "gpucloud-p5"),
                Map.entry("LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version", "$Latest"),
                Map.entry("LaunchTemplateConfigs.1.Overrides.1.SubnetId", "subnet-a"))
                .doesNotContainKey("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId");
    }

    @Test
    void a_zone_out_of_spot_capacity_is_passed_over_for_the_next() {
        ec2.fleet().capacity(A, "spot", 0);

        LaunchOutcome outcome = provider.launch(mkSpot("req-1", 3, A, B));

        assertThat(outcome.errors()).isEmpty();
        assertThat(outcome.launched()).extracting(ProviderInstance::zone).containsOnly(B).hasSize(3);
    }

    @Test
    void spot_short_in_every_zone_is_a_partial_launch_that_names_the_zones_that_ran_out() {
        ec2.fleet().capacity(A, "spot", 0).capacity(B, "spot", 2);

        LaunchOutcome outcome = provider.launch(mkSpot("req-1", 3, A, B));

        assertThat(outcome.launched()).extracting(ProviderInstance::zone).containsExactly(B, B);
        assertThat(outcome.errors()).extracting(LaunchError::code, LaunchError::zone, LaunchError::capacity)
                .containsExactlyInAnyOrder(
                        tuple("InsufficientInstanceCapacity", A, Capacity.SPOT),
                        tuple("InsufficientInstanceCapacity", B, Capacity.SPOT));
        assertThat(ec2.calls("CreateFleet")).hasSize(1);
    }

    @Test
    void spot_refused_entirely_falls_back_to_on_demand_when_the_request_allows_it() {
        ec2.fleet().capacity(A, "spot", 0).capacity(B, "spot", 0);

        LaunchOutcome outcome = provider.launch(mkRequest("req-1", 2, Capacity.SPOT, true, null, A, B));

        assertThat(outcome.launched()).hasSize(2).extracting(ProviderInstance::capacity).containsOnly(Capacity.ON_DEMAND);
        assertThat(outcome.errors()).extracting(LaunchError::code, LaunchError::capacity)
                .containsOnly(tuple("InsufficientInstanceCapacity", Capacity.SPOT));
        List<Call> fleets = ec2.calls("CreateFleet");
        assertThat(fleets).hasSize(2);
        assertThat(fleets.get(1).params()).contains(
                Map.entry("ClientToken", "req-1:on-demand"),
                Map.entry("TargetCapacitySpecification.DefaultTargetCapacityType", "on-demand"),
                Map.entry("TargetCapacitySpecification.TotalTargetCapacity", "2"),
                Map.entry("OnDemandOptions.AllocationStrategy", "prioritized"));
        assertThat(fleets.get(1).params()).doesNotContainKey("SpotOptions.AllocationStrategy");
        assertThat(provider.instances()).extracting(ProviderInstance::capacity).containsOnly(Capacity.ON_DEMAND);
    }

    @Test
    void the_on_demand_fallback_asks_only_for_what_spot_did_not_give() {
        ec2.fleet().capacity(A, "spot", 1).capacity(B, "spot", 0);

        LaunchOutcome outcome = provider.launch(mkRequest("req-1", 3, Capacity.SPOT, true, null, A, B));

        assertThat(outcome.launched()).extracting(ProviderInstance::capacity)
                .containsExactlyInAnyOrder(Capacity.SPOT, Capacity.ON_DEMAND, Capacity.ON_DEMAND);
        assertThat(ec2.calls("CreateFleet").get(1).param("TargetCapacitySpecification.TotalTargetCapacity")).isEqualTo("2");
    }

    @Test
    void a_gang_refused_on_spot_falls_back_whole_to_on_demand_in_one_zone() {
        ec2.fleet().capacity(A, "spot", 1).capacity(B, "spot", 1);

        LaunchOutcome outcome = provider.launch(mkRequest("gang-1", 2, Capacity.SPOT, true, "pg-gang-1", A, B));

        assertThat(outcome.launched()).hasSize(2).allSatisfy(i -> {
            assertThat(i.capacity()).isEqualTo(Capacity.ON_DEMAND);
            assertThat(i.placementGroup()).isEqualTo("pg-gang-1");
        });
        assertThat(outcome.launched()).extracting(ProviderInstance::zone).containsOnly(A);
        assertThat(ec2.calls("CreateFleet").get(1).params()).contains(
                Map.entry("OnDemandOptions.SingleAvailabilityZone", "true"),
                Map.entry("OnDemandOptions.MinTargetCapacity", "2"));
        assertThat(ec2.fleet().instances()).extracting(i -> i.lifecycle).containsOnly("on-demand");
    }

    @Test
    void an_on_demand_fallback_that_fails_keeps_the_spot_hosts_and_says_why_the_rest_did_not_come() {
        ec2.fleet().capacity(A, "spot", 1);
        ec2.failAction("CreateFleet", 1, 10, 503, "Unavailable", "The server is overloaded and can't handle the request.");

        LaunchOutcome outcome = provider.launch(mkRequest("req-1", 3, Capacity.SPOT, true, null, A));

        assertThat(outcome.launched()).extracting(ProviderInstance::capacity).containsExactly(Capacity.SPOT);
        assertThat(outcome.errors()).extracting(LaunchError::code, LaunchError::capacity).containsExactly(
                tuple("InsufficientInstanceCapacity", Capacity.SPOT), tuple("Unavailable", Capacity.ON_DEMAND));
    }

    @Test
    void spot_refused_without_fallback_is_an_error_with_code_and_zone() {
        ec2.fleet().capacity(A, "spot", 0);

        LaunchOutcome outcome = provider.launch(mkSpot("req-1", 2, A));

        assertThat(outcome.launched()).isEmpty();
        assertThat(outcome.errors()).singleElement().satisfies(e -> {
            assertThat(e.code()).isEqualTo("InsufficientInstanceCapacity");
            assertThat(e.zone()).isEqualTo(A);
            assertThat(e.capacity()).isEqualTo(Capacity.SPOT);
            assertThat(e.message()).contains("Spot capacity");
        });
        assertThat(ec2.calls("CreateFleet")).hasSize(1);
    }

    @Test
    void a_gang_gets_a_cluster_placement_group_and_lands_whole_in_one_zone() {
        ec2.fleet().capacity(A, "spot", 2).capacity(B, "spot", 8);

        LaunchOutcome outcome = provider.launch(mkRequest("gang-1", 4, Capacity.SPOT, false, "pg-gang-1", A, B));

        assertThat(outcome.errors()).isEmpty();
        assertThat(outcome.launched()).hasSize(4).allSatisfy(i -> {
            assertThat(i.zone()).isEqualTo(B);
            assertThat(i.placementGroup()).isEqualTo("pg-gang-1");
        });
        assertThat(single("CreatePlacementGroup").params())
                .contains(Map.entry("GroupName", "pg-gang-1"), Map.entry("Strategy", "cluster"));
        assertThat(single("CreateFleet").params()).contains(
                Map.entry("LaunchTemplateConfigs.1.Overrides.1.Placement.GroupName", "pg-gang-1"),
                Map.entry("LaunchTemplateConfigs.1.Overrides.2.Placement.GroupName", "pg-gang-1"),
                Map.entry("SpotOptions.SingleAvailabilityZone", "true"),
                Map.entry("SpotOptions.MinTargetCapacity", "4"));
        assertThat(provider.instances()).extracting(ProviderInstance::placementGroup).containsOnly("pg-gang-1");
    }

    @Test
    void a_placement_group_that_exists_already_is_used_as_it_is() {
        provider.launch(mkRequest("gang-1", 2, Capacity.ON_DEMAND, false, "pg-shared", A));

        LaunchOutcome again = provider.launch(mkRequest("gang-2", 2, Capacity.ON_DEMAND, false, "pg-shared", A));

        assertThat(again.errors()).isEmpty();
        assertThat(again.launched()).hasSize(2);
        assertThat(ec2.calls("CreatePlacementGroup")).hasSize(2);
        assertThat(ec2.fleet().placementGroups()).containsExactly("pg-shared");
    }

    @Test
    void a_gang_that_no_zone_can_hold_whole_launches_nothing() {
        ec2.fleet().capacity(A, "spot", 2).capacity(B, "spot", 3);

        LaunchOutcome outcome = provider.launch(mkRequest("gang-1", 4, Capacity.SPOT, false, "pg-gang-1", A, B));

        assertThat(outcome.launched()).isEmpty();
        assertThat(outcome.errors()).extracting(LaunchError::code, LaunchError::zone)
                .containsExactlyInAnyOrder(tuple("InsufficientInstanceCapacity", A), tuple("InsufficientInstanceCapacity", B));
        assertThat(ec2.fleet().instances()).isEmpty();
    }

    @Test
    void throttled_calls_are_retried_by_the_sdk_with_the_same_client_token() {
        ec2.throttleNext(2);

        LaunchOutcome outcome = provider.launch(mkSpot("req-1", 4, A, B));

        assertThat(outcome.errors()).isEmpty();
        assertThat(outcome.launched()).hasSize(4);
        assertThat(ec2.calls("CreateFleet")).hasSize(3).extracting(c -> c.param("ClientToken")).containsOnly("req-1");
        assertThat(ec2.fleet().instances()).hasSize(4);
    }

    @Test
    void a_launch_repeated_with_its_request_id_launches_nothing_more() {
        LaunchOutcome first = provider.launch(mkSpot("req-1", 2, A));
        LaunchOutcome again = provider.launch(mkSpot("req-1", 2, A));

        assertThat(again.launched()).extracting(ProviderInstance::instanceId)
                .containsExactlyElementsOf(first.launched().stream().map(ProviderInstance::instanceId).toList());
        assertThat(ec2.fleet().instances()).hasSize(2);
    }

    @Test
    void ec2_unavailable_on_every_attempt_is_an_error_outcome_and_no_fallback() {
        ec2.failNext(10, 503, "Unavailable", "The server is overloaded and can't handle the request.");

        LaunchOutcome outcome = provider.launch(mkRequest("req-1", 2, Capacity.SPOT, true, null, A));

        assertThat(outcome.launched()).isEmpty();
        assertThat(outcome.errors()).singleElement().satisfies(e -> {
            assertThat(e.code()).isEqualTo("Unavailable");
            assertThat(e.message()).contains("overloaded");
            assertThat(e.capacity()).isEqualTo(Capacity.SPOT);
        });
        assertThat(ec2.calls("CreateFleet")).hasSize(Ec2Clients.DEFAULT_MAX_ATTEMPTS);
    }

    @Test
    void ec2_unreachable_is_an_error_outcome() {
        ec2.close();

        LaunchOutcome outcome = provider.launch(mkSpot("req-1", 1, A));

        assertThat(outcome.launched()).isEmpty();
        assertThat(outcome.errors()).extracting(LaunchError::code).containsExactly(Ec2Provider.UNREACHABLE);
    }

    @Test
    void a_request_id_too_long_for_a_client_token_becomes_a_stable_uuid() {
        String longId = "r".repeat(80);

        assertThat(InstantFleetRequests.clientToken("req-1", "")).isEqualTo("req-1");
        assertThat(InstantFleetRequests.clientToken(longId, "")).hasSize(36)
                .isEqualTo(InstantFleetRequests.clientToken(longId, ""))
                .isNotEqualTo(InstantFleetRequests.clientToken(longId, "on-demand"));
    }

}
