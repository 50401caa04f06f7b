package dev.gpucloud.autoscaler.provider.aws;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the operator sets up outside the autoscaler: the launch templates (AMI, user data, instance profile, security
 * groups) and the subnets, one per zone. {@code fleetName} goes into the {@code gpucloud:fleet} tag, by which the
 * provider finds its hosts again, leaked ones included.
 *
 * @param launchTemplate         the template of every instance type that has none of its own
 * @param templatesByInstanceType templates for instance types that need another AMI or disk layout
 * @param subnetsByZone          the subnet to launch into, per zone, in order of preference; a zone without one
 *                               gets its default subnet
 */
public record Ec2ProviderConfig(
        String fleetName,
        LaunchTemplate launchTemplate,
        Map<String, LaunchTemplate> templatesByInstanceType,
        Map<String, String> subnetsByZone) {

    public Ec2ProviderConfig {
        Objects.requireNonNull(fleetName, "fleetName");
        Objects.requireNonNull(launchTemplate, "launchTemplate");
        if (fleetName.isBlank()) {
            throw new IllegalArgumentException("fleetName is blank");
        }
        templatesByInstanceType = Map.copyOf(templatesByInstanceType);
        subnetsByZone = Collections.unmodifiableMap(new LinkedHashMap<>(subnetsByZone));
    }

    /** One template for every instance type, subnets per zone. */
    public static Ec2ProviderConfig of(String fleetName, LaunchTemplate template, Map<String, String> subnetsByZone) {
        return new Ec2ProviderConfig(fleetName, template, Map.of(), subnetsByZone);
    }

    /** The template an instance type launches from. */
    public LaunchTemplate templateFor(String instanceType) {
        return templatesByInstanceType.getOrDefault(instanceType, launchTemplate);
    }

    /** The subnet of a zone, if the operator named one. */
    public Optional<String> subnetOf(String zone) {
        return Optional.ofNullable(subnetsByZone.get(zone));
    }

    /** The zone a configured subnet lies in, or null. */
    public String zoneOfSubnet(String subnetId) {
        return subnetsByZone.entrySet().stream()
                .filter(e -> e.getValue().equals(subnetId))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse(null);
    }

    /** The zones a request that names none may use: those with a subnet, in the configured order. */
    public List<String> defaultZones() {
        return List.copyOf(subnetsByZone.keySet());
    }

    /**
     * An EC2 launch template, by id or by name (exactly one), at a version ({@code $Default}, {@code $Latest} or a
     * number).
     */
    public record LaunchTemplate(String id, String name, String version) {

        public LaunchTemplate {
            if ((id == null) == (name == null)) {
                throw new IllegalArgumentException("a launch template has an id or a name, exactly one");
            }
            version = version == null ? "$Default" : version;
        }

        public static LaunchTemplate byId(String id) {
            return new LaunchTemplate(id, null, null);
        }

        public static LaunchTemplate byName(String name) {
            return new LaunchTemplate(null, name, null);
        }

        public LaunchTemplate atVersion(String version) {
            return new LaunchTemplate(id, name, version);
        }
    }
}
