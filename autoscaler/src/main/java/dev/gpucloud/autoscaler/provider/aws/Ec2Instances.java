package dev.gpucloud.autoscaler.provider.aws;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.provider.LaunchOutcome.LaunchError;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import dev.gpucloud.autoscaler.provider.ProviderInstance.State;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.services.ec2.model.CreateFleetError;
import software.amazon.awssdk.services.ec2.model.CreateFleetInstance;
import software.amazon.awssdk.services.ec2.model.FleetLaunchTemplateOverrides;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.LaunchTemplateAndOverridesResponse;
import software.amazon.awssdk.services.ec2.model.Tag;

/** EC2's answers as the provider's values: the fleet's instances and errors, and described instances. */
final class Ec2Instances {

    private final Ec2ProviderConfig config;
    private final Clock clock;

    Ec2Instances(Ec2ProviderConfig config, Clock clock) {
        this.config = config;
        this.clock = clock;
    }

    /** The fleet's launched instances: pending, since EC2 has only just accepted them. */
    List<ProviderInstance> launched(LaunchRequest request, Capacity asked, List<CreateFleetInstance> items) {
        List<ProviderInstance> launched = new ArrayList<>();
        var now = clock.instant();
        for (CreateFleetInstance item : items) {
            String zone = zoneOf(item.launchTemplateAndOverrides());
            if (zone == null) {
                zone = item.availabilityZone() != null ? item.availabilityZone() : zoneOfSubnet(item.subnetId());
            }
            String type = item.instanceTypeAsString() != null ? item.instanceTypeAsString() : request.instanceType();
            Capacity capacity = capacityOf(item.lifecycleAsString(), asked);
            for (String id : item.instanceIds()) {
                launched.add(new ProviderInstance(
                        id, type, capacity, zone, request.placementGroup(), State.PENDING, now, request.pool()));
            }
        }
        return launched;
    }

    /** The fleet's refusals, one per override EC2 names (zone and lifecycle where it says). */
    List<LaunchError> refused(Capacity asked, List<CreateFleetError> items) {
        return items.stream()
                .map(e -> new LaunchError(
                        e.errorCode(), e.errorMessage(), zoneOf(e.launchTemplateAndOverrides()),
                        capacityOf(e.lifecycleAsString(), asked)))
                .toList();
    }

    /** A described instance; its pool and fleet come from its tags. */
    ProviderInstance described(Instance instance) {
        String pool = null;
        for (Tag tag : instance.tags()) {
            if (Ec2Provider.POOL_TAG.equals(tag.key())) {
                pool = tag.value();
            }
        }
        var placement = instance.placement();
        String zone = placement == null ? null : placement.availabilityZone();
        String group = placement == null || placement.groupName() == null || placement.groupName().isEmpty()
                ? null
                : placement.groupName();
        Capacity capacity = "spot".equals(instance.instanceLifecycleAsString()) ? Capacity.SPOT : Capacity.ON_DEMAND;
        String state = instance.state() == null ? null : instance.state().nameAsString();
        return new ProviderInstance(
                instance.instanceId(),
                instance.instanceTypeAsString(),
                capacity,
                zone,
                group,
                stateOf(state),
                instance.launchTime() == null ? clock.instant() : instance.launchTime(),
                pool);
    }

    static State stateOf(String ec2State) {
        if (ec2State == null) {
            return State.PENDING;
        }
        return switch (ec2State) {
            case "running" -> State.RUNNING;
            case "shutting-down", "stopping", "stopped" -> State.STOPPING;
            case "terminated" -> State.TERMINATED;
            default -> State.PENDING;
        };
    }

    private static Capacity capacityOf(String lifecycle, Capacity asked) {
        if ("spot".equals(lifecycle)) {
            return Capacity.SPOT;
        }
        if ("on-demand".equals(lifecycle)) {
            return Capacity.ON_DEMAND;
        }
        return asked;
    }

    private String zoneOf(LaunchTemplateAndOverridesResponse lto) {
        if (lto == null || lto.overrides() == null) {
            return null;
        }
        FleetLaunchTemplateOverrides o = lto.overrides();
        return o.availabilityZone() != null ? o.availabilityZone() : zoneOfSubnet(o.subnetId());
    }

    private String zoneOfSubnet(String subnetId) {
        return subnetId == null ? null : config.zoneOfSubnet(subnetId);
    }
}
