package dev.gpucloud.autoscaler.provider.aws;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.services.ec2.model.CreateFleetRequest;
import software.amazon.awssdk.services.ec2.model.DefaultTargetCapacityType;
import software.amazon.awssdk.services.ec2.model.FleetLaunchTemplateConfigRequest;
import software.amazon.awssdk.services.ec2.model.FleetLaunchTemplateOverridesRequest;
import software.amazon.awssdk.services.ec2.model.FleetLaunchTemplateSpecificationRequest;
import software.amazon.awssdk.services.ec2.model.FleetOnDemandAllocationStrategy;
import software.amazon.awssdk.services.ec2.model.FleetType;
import software.amazon.awssdk.services.ec2.model.OnDemandOptionsRequest;
import software.amazon.awssdk.services.ec2.model.Placement;
import software.amazon.awssdk.services.ec2.model.ResourceType;
import software.amazon.awssdk.services.ec2.model.SpotAllocationStrategy;
import software.amazon.awssdk.services.ec2.model.SpotOptionsRequest;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.TagSpecification;
import software.amazon.awssdk.services.ec2.model.TargetCapacitySpecificationRequest;

/**
 * Turns a launch request into one instant EC2 Fleet: one launch template, one override per zone (its subnet, the
 * instance type, the placement group), spot placed where capacity is deepest ({@code capacity-optimized}), on demand
 * in the request's order of zones ({@code prioritized}). A gang (a request with a placement group) is all or nothing
 * in one zone: {@code MinTargetCapacity} = count with {@code SingleAvailabilityZone}.
 */
final class InstantFleetRequests {

    /** EC2 takes client tokens of up to 64 ASCII characters. */
    static final int MAX_CLIENT_TOKEN = 64;

    private final Ec2ProviderConfig config;

    InstantFleetRequests(Ec2ProviderConfig config) {
        this.config = config;
    }

    /** {@code count} hosts of the request as {@code capacity}, idempotent on {@code clientToken}. */
    CreateFleetRequest build(LaunchRequest request, Capacity capacity, int count, String clientToken) {
        boolean gang = request.placementGroup() != null;
        var target = TargetCapacitySpecificationRequest.builder().totalTargetCapacity(count);
        if (capacity == Capacity.SPOT) {
            target.defaultTargetCapacityType(DefaultTargetCapacityType.SPOT).spotTargetCapacity(count).onDemandTargetCapacity(0);
        } else {
            target.defaultTargetCapacityType(DefaultTargetCapacityType.ON_DEMAND).onDemandTargetCapacity(count).spotTargetCapacity(0);
        }
        var fleet = CreateFleetRequest.builder()
                .type(FleetType.INSTANT)
                .clientToken(clientToken)
                .targetCapacitySpecification(target.build());
        // Only the options of the capacity asked for: a fleet is all spot or all on demand.
        if (capacity == Capacity.SPOT) {
            var spot = SpotOptionsRequest.builder().allocationStrategy(SpotAllocationStrategy.CAPACITY_OPTIMIZED);
            if (gang) {
                spot.singleAvailabilityZone(true).singleInstanceType(true).minTargetCapacity(count);
            }
            fleet.spotOptions(spot.build());
        } else {
            var onDemand = OnDemandOptionsRequest.builder().allocationStrategy(FleetOnDemandAllocationStrategy.PRIORITIZED);
            if (gang) {
                onDemand.singleAvailabilityZone(true).singleInstanceType(true).minTargetCapacity(count);
            }
            fleet.onDemandOptions(onDemand.build());
        }
        return fleet
                .launchTemplateConfigs(launchTemplateConfig(request))
                .tagSpecifications(TagSpecification.builder()
                        .resourceType(ResourceType.INSTANCE)
                        .tags(tags(request))
                        .build())
                .build();
    }

    private FleetLaunchTemplateConfigRequest launchTemplateConfig(LaunchRequest request) {
        var template = config.templateFor(request.instanceType());
        var spec = FleetLaunchTemplateSpecificationRequest.builder()
                .launchTemplateId(template.id())
                .launchTemplateName(template.name())
                .version(template.version())
                .build();
        List<String> zones = request.zones().isEmpty() ? config.defaultZones() : request.zones();
        List<FleetLaunchTemplateOverridesRequest> overrides = new ArrayList<>();
        if (zones.isEmpty()) {
            overrides.add(override(request, null, 0));
        }
        for (int i = 0; i < zones.size(); i++) {
            overrides.add(override(request, zones.get(i), i));
        }
        return FleetLaunchTemplateConfigRequest.builder().launchTemplateSpecification(spec).overrides(overrides).build();
    }

    private FleetLaunchTemplateOverridesRequest override(LaunchRequest request, String zone, int priority) {
        var override = FleetLaunchTemplateOverridesRequest.builder()
                .instanceType(request.instanceType())
                .priority((double) priority);
        if (zone != null) {
            // EC2 refuses a subnet together with a zone it does not lie in; the subnet alone names the zone.
            config.subnetOf(zone).ifPresentOrElse(override::subnetId, () -> override.availabilityZone(zone));
        }
        if (request.placementGroup() != null) {
            override.placement(Placement.builder().groupName(request.placementGroup()).build());
        }
        return override.build();
    }

    /** The request's own tags, then the ownership tags, which no request tag may override. */
    List<Tag> tags(LaunchRequest request) {
        Map<String, String> tags = new LinkedHashMap<>(request.tags());
        tags.put(Ec2Provider.FLEET_TAG, config.fleetName());
        tags.put(Ec2Provider.POOL_TAG, request.pool());
        tags.put(Ec2Provider.REQUEST_TAG, request.requestId());
        return tags.entrySet().stream().map(e -> Tag.builder().key(e.getKey()).value(e.getValue()).build()).toList();
    }

    /**
     * The request id as the fleet's client token, with a suffix for a second step of the same launch; an id too long
     * for EC2 is replaced by a name-based UUID of it, which is as stable.
     */
    static String clientToken(String requestId, String step) {
        String token = step.isEmpty() ? requestId : requestId + ":" + step;
        boolean ascii = StandardCharsets.US_ASCII.newEncoder().canEncode(token);
        if (token.length() <= MAX_CLIENT_TOKEN && ascii) {
            return token;
        }
        return UUID.nameUUIDFromBytes(token.getBytes(StandardCharsets.UTF_8)).toString();
    }
}
