package dev.gpucloud.autoscaler.provider.aws;

import static dev.gpucloud.autoscaler.provider.aws.Ec2StandIn.element;

import dev.gpucloud.autoscaler.provider.aws.Ec2StandIn.Ec2Error;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The stand-in's EC2: instances, placement groups and a capacity per zone and lifecycle. Instant fleets fill
 * spot from the deepest zone first ({@code capacity-optimized}) and on demand in the overrides' priority order, and
 * answer a {@code fleetInstanceSet} for what came and an {@code errorSet} item ({@code InsufficientInstanceCapacity})
 * for each override that ran out. A zone with no capacity set has plenty. Terminated instances stay visible, as
 * EC2's do for about an hour.
 */
final class Ec2StandInFleet {

    private static final Set<String> FILTERS = Set.of("instance-state-name", "instance-id");
    private static final Pattern WELL_FORMED_ID = Pattern.compile("i-[0-9a-f]{8,17}");

    /** One instance as the stand-in keeps it. */
    static final class StandInInstance {
        final String id;
        final String reservationId;
        final String type;
        final String zone;
        final String subnetId;
        final String lifecycle;
        final String placementGroup;
        final Map<String, String> tags;
        final Instant launchTime;
        String state = "running";

        StandInInstance(String id, String reservationId, String type, String zone, String subnetId, String lifecycle,
                String placementGroup, Map<String, String> tags, Instant launchTime) {
            this.id = id;
            this.reservationId = reservationId;
            this.type = type;
            this.zone = zone;
            this.subnetId = subnetId;
            this.lifecycle = lifecycle;
            this.placementGroup = placementGroup;
            this.tags = tags;
            this.launchTime = launchTime;
        }
    }

    private final Map<String, String> zonesBySubnet = new HashMap<>();
    private final Map<String, Integer> capacity = new HashMap<>();
    private final Map<String, StandInInstance> instances = new LinkedHashMap<>();
    private final Set<String> placementGroups = new HashSet<>();
    private final Map<String, String> fleetsByClientToken = new HashMap<>();
    private final Map<String, Map<String, String>> paramsByClientToken = new HashMap<>();
    private int pageSize = 1000;
    private long nextId = 0x1000;

    synchronized Ec2StandInFleet subnet(String subnetId, String zone) {
        zonesBySubnet.put(subnetId, zone);
        return this;
    }

    /** How many more instances of this lifecycle ({@code spot}, {@code on-demand}) the zone can give. */
    synchronized Ec2StandInFleet capacity(String zone, String lifecycle, int instances) {
        capacity.put(zone + "/" + lifecycle, instances);
        return this;
    }

    /** The most instances a DescribeInstances page carries, however many the caller asks for. */
    synchronized Ec2StandInFleet pageSize(int pageSize) {
        this.pageSize = pageSize;
        return this;
    }

    synchronized List<StandInInstance> instances() {
        return List.copyOf(instances.values());
    }

    synchronized Set<String> placementGroups() {
        return Set.copyOf(placementGroups);
    }

    synchronized String createFleet(Map<String, String> p) {
        if (!"instant".equals(p.get("Type"))) {
            throw new Ec2Error(400, "InvalidParameterValue", "The stand-in runs instant fleets only, not " + p.get("Type"));
        }
        String token = p.get("ClientToken");
        if (token != null && fleetsByClientToken.containsKey(token)) {
            if (!paramsByClientToken.get(token).equals(p)) {
                throw new Ec2Error(400, "IdempotentParameterMismatch",
                        "The client token '" + token + "' was used before with other parameters");
            }
            return fleetsByClientToken.get(token);
        }
        String lifecycle = switch (require(p, "TargetCapacitySpecification.DefaultTargetCapacityType")) {
            case "spot" -> "spot";
            case "on-demand" -> "on-demand";
            default -> throw new Ec2Error(400, "InvalidParameterValue", "DefaultTargetCapacityType");
        };
        int total = Integer.parseInt(require(p, "TargetCapacitySpecification.TotalTargetCapacity"));
        String options = lifecycle.equals("spot") ? "SpotOptions." : "OnDemandOptions.";
        boolean singleZone = "true".equals(p.get(options + "SingleAvailabilityZone"));
        int min = p.containsKey(options + "MinTargetCapacity") ? Integer.parseInt(p.get(options + "MinTargetCapacity")) : 0;
        Map<String, String> tags = instanceTags(p);

        List<Map<String, String>> configs = members(p, "LaunchTemplateConfigs");
        if (configs.size() != 1) {
            throw new Ec2Error(400, "InvalidParameterValue", "The stand-in takes one launch template config");
        }
        Map<String, String> spec = prefixed(configs.get(0), "LaunchTemplateSpecification.");
        List<Map<String, String>> overrides = members(configs.get(0), "Overrides");
        if (overrides.isEmpty()) {
            throw new Ec2Error(400, "InvalidParameterValue", "The stand-in needs an override per zone");
        }
        for (var o : overrides) {
            String group = o.get("Placement.GroupName");
            if (group != null && !placementGroups.contains(group)) {
                throw new Ec2Error(400, "InvalidPlacementGroup.Unknown", "The Placement Group '" + group + "' is unknown.");
            }
            if (o.get("SubnetId") != null && !zonesBySubnet.containsKey(o.get("SubnetId"))) {
                throw new Ec2Error(400, "InvalidSubnetID.NotFound", "The subnet ID '" + o.get("SubnetId") + "' does not exist");
            }
        }
        List<Map<String, String>> order = new ArrayList<>(overrides);
        if (lifecycle.equals("spot")) {
            order.sort(Comparator.comparingInt((Map<String, String> o) -> available(zoneOf(o), lifecycle)).reversed());
        } else {
            order.sort(Comparator.comparingDouble(o -> Double.parseDouble(o.getOrDefault("Priority", "0"))));
        }
        if (singleZone) {
            int need = Math.max(min, 1);
            order = order.stream().filter(o -> available(zoneOf(o), lifecycle) >= need).limit(1).toList();
        }
        int alreadyPossible = order.stream().mapToInt(o -> Math.min(available(zoneOf(o), lifecycle), total)).sum();
        boolean allOrNothingFails = min > 0 && Math.min(alreadyPossible, total) < min;

        String reservationId = "r-" + hex(nextId++);
        StringBuilder launched = new StringBuilder();
        StringBuilder errors = new StringBuilder();
        int remaining = allOrNothingFails ? 0 : total;
        for (var o : order) {
            if (remaining == 0) {
                break;
            }
            String zone = zoneOf(o);
            int take = Math.min(remaining, available(zone, lifecycle));
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < take; i++) {
                String id = "i-" + hex(nextId++);
                ids.add(id);
                instances.put(id, new StandInInstance(id, reservationId, o.get("InstanceType"), zone, o.get("SubnetId"),
                        lifecycle, o.get("Placement.GroupName"), tags, Instant.now().truncatedTo(ChronoUnit.SECONDS)));
            }
            consume(zone, lifecycle, take);
            remaining -= take;
            if (take > 0) {
                launched.append("<item>").append(launchTemplateAndOverrides(spec, o)).append(element("lifecycle", lifecycle))
                        .append("<instanceIds>");
                ids.forEach(id -> launched.append(element("item", id)));
                launched.append("</instanceIds>").append(element("instanceType", o.get("InstanceType"))).append("</item>");
            }
            if (remaining > 0) {
                errors.append(insufficientCapacity(spec, o, lifecycle));
            }
        }
        if (allOrNothingFails || (singleZone && order.isEmpty())) {
            overrides.forEach(o -> errors.append(insufficientCapacity(spec, o, lifecycle)));
        }
        String answer = element("fleetId", "fleet-" + hex(nextId++)) + "<errorSet>" + errors + "</errorSet>"
                + "<fleetInstanceSet>" + launched + "</fleetInstanceSet>";
        if (token != null) {
            fleetsByClientToken.put(token, answer);
            paramsByClientToken.put(token, Map.copyOf(p));
        }
        return answer;
    }

    synchronized String describeInstances(Map<String, String> p) {
        List<Map<String, String>> filters = members(p, "Filter");
        for (var f : filters) {
            String name = f.getOrDefault("Name", "");
            if (!name.startsWith("tag:") && !FILTERS.contains(name)) {
                throw new Ec2Error(400, "InvalidParameterValue", "The filter '" + name + "' is invalid");
            }
        }
        List<StandInInstance> matching = instances.values().stream().filter(i -> filters.stream().allMatch(f -> matches(i, f)))
                .toList();
        int offset = p.containsKey("NextToken") ? Integer.parseInt(p.get("NextToken").substring("page-".length())) : 0;
        int max = Math.min(pageSize, p.containsKey("MaxResults") ? Integer.parseInt(p.get("MaxResults")) : 1000);
        List<StandInInstance> page = matching.subList(Math.min(offset, matching.size()), Math.min(offset + max, matching.size()));
        StringBuilder xml = new StringBuilder("<reservationSet>");
        String open = null;
        for (StandInInstance i : page) {
            if (!i.reservationId.equals(open)) {
                if (open != null) {
                    xml.append("</instancesSet></item>");
                }
                open = i.reservationId;
                xml.append("<item>").append(element("reservationId", i.reservationId)).append(element("ownerId", "123456789012"))
                        .append("<groupSet/><instancesSet>");
            }
            xml.append(instanceXml(i));
        }
        if (open != null) {
            xml.append("</instancesSet></item>");
        }
        xml.append("</reservationSet>");
        if (offset + max < matching.size()) {
            xml.append(element("nextToken", "page-" + (offset + max)));
        }
        return xml.toString();
    }

    synchronized String terminateInstances(Map<String, String> p) {
        List<String> ids = values(p, "InstanceId");
        List<String> malformed = ids.stream().filter(id -> !WELL_FORMED_ID.matcher(id).matches()).toList();
        if (!malformed.isEmpty()) {
            throw new Ec2Error(400, "InvalidInstanceID.Malformed", "Invalid id: \"" + malformed.get(0) + "\"");
        }
        List<String> unknown = ids.stream().filter(id -> !instances.containsKey(id)).toList();
        if (unknown.size() == 1) {
            throw new Ec2Error(400, "InvalidInstanceID.NotFound", "The instance ID '" + unknown.get(0) + "' does not exist");
        }
        if (unknown.size() > 1) {
            throw new Ec2Error(400, "InvalidInstanceID.NotFound",
                    "The instance IDs '" + String.join(", ", unknown) + "' do not exist");
        }
        StringBuilder xml = new StringBuilder("<instancesSet>");
        for (String id : ids) {
            StandInInstance i = instances.get(id);
            String previous = i.state;
            String current = previous.equals("terminated") ? "terminated" : "shutting-down";
            // A terminated instance shows as such from the next call on: its shutting-down is over at once here.
            i.state = "terminated";
            xml.append("<item>").append(element("instanceId", id)).append(state("currentState", current))
                    .append(state("previousState", previous)).append("</item>");
        }
        return xml.append("</instancesSet>").toString();
    }

    synchronized String createPlacementGroup(Map<String, String> p) {
        String name = require(p, "GroupName");
        if (!"cluster".equals(p.get("Strategy")) && !"spread".equals(p.get("Strategy")) && !"partition".equals(p.get("Strategy"))) {
            throw new Ec2Error(400, "InvalidParameterValue", "Invalid placement group strategy: " + p.get("Strategy"));
        }
        if (!placementGroups.add(name)) {
            throw new Ec2Error(400, "InvalidPlacementGroup.Duplicate", "The Placement Group '" + name + "' already exists.");
        }
        return element("return", "true");
    }

    private String instanceXml(StandInInstance i) {
        StringBuilder xml = new StringBuilder("<item>").append(element("instanceId", i.id)).append(element("imageId", "ami-0123456789abcdef0"))
                .append(state("instanceState", i.state)).append(element("instanceType", i.type))
                .append(element("launchTime", i.launchTime.toString()))
                .append("<placement>").append(element("availabilityZone", i.zone)).append(element("groupName", i.placementGroup))
                .append(element("tenancy", "default")).append("</placement>")
                .append(element("subnetId", i.subnetId));
        if (i.lifecycle.equals("spot")) {
            xml.append(element("instanceLifecycle", "spot"));
        }
        xml.append("<tagSet>");
        i.tags.forEach((k, v) -> xml.append("<item>").append(element("key", k)).append(element("value", v)).append("</item>"));
        return xml.append("</tagSet></item>").toString();
    }

    private boolean matches(StandInInstance i, Map<String, String> filter) {
        String name = filter.get("Name");
        List<String> wanted = values(filter, "Value");
        if (name.startsWith("tag:")) {
            return wanted.contains(i.tags.get(name.substring(4)));
        }
        return switch (name) {
            case "instance-state-name" -> wanted.contains(i.state);
            case "instance-id" -> wanted.contains(i.id);
            default -> throw new Ec2Error(400, "InvalidParameterValue", "The filter '" + name + "' is invalid");
        };
    }

    private String insufficientCapacity(Map<String, String> spec, Map<String, String> o, String lifecycle) {
        String what = lifecycle.equals("spot") ? "Spot capacity" : "On-Demand capacity";
        return "<item>" + launchTemplateAndOverrides(spec, o) + element("lifecycle", lifecycle)
                + element("errorCode", "InsufficientInstanceCapacity")
                + element("errorMessage", "There is no " + what + " available that matches your request.") + "</item>";
    }

    private static String launchTemplateAndOverrides(Map<String, String> spec, Map<String, String> o) {
        return "<launchTemplateAndOverrides><launchTemplateSpecification>"
                + element("launchTemplateId", spec.get("LaunchTemplateId"))
                + element("launchTemplateName", spec.get("LaunchTemplateName")) + element("version", spec.get("Version"))
                + "</launchTemplateSpecification><overrides>" + element("instanceType", o.get("InstanceType"))
                + element("subnetId", o.get("SubnetId")) + element("availabilityZone", o.get("AvailabilityZone"))
                + element("priority", o.get("Priority"))
                + (o.containsKey("Placement.GroupName") ? "<placement>" + element("groupName", o.get("Placement.GroupName")) + "</placement>" : "")
                + "</overrides></launchTemplateAndOverrides>";
    }

    private Map<String, String> instanceTags(Map<String, String> p) {
        Map<String, String> tags = new LinkedHashMap<>();
        for (var spec : members(p, "TagSpecification")) {
            if ("instance".equals(spec.get("ResourceType"))) {
                for (var tag : members(spec, "Tag")) {
                    tags.put(tag.get("Key"), tag.get("Value"));
                }
            }
        }
        return tags;
    }

    private String zoneOf(Map<String, String> override) {
        return override.get("SubnetId") != null ? zonesBySubnet.get(override.get("SubnetId")) : override.get("AvailabilityZone");
    }

    private int available(String zone, String lifecycle) {
        return capacity.getOrDefault(zone + "/" + lifecycle, Integer.MAX_VALUE / 2);
    }

    private void consume(String zone, String lifecycle, int n) {
        capacity.computeIfPresent(zone + "/" + lifecycle, (k, v) -> v - n);
    }

    private static String state(String element, String name) {
        int code = switch (name) {
            case "pending" -> 0;
            case "running" -> 16;
            case "shutting-down" -> 32;
            case "terminated" -> 48;
            case "stopping" -> 64;
            default -> 80;
        };
        return "<" + element + ">" + Ec2StandIn.element("code", code) + Ec2StandIn.element("name", name) + "</" + element + ">";
    }

    private static String require(Map<String, String> p, String name) {
        String value = p.get(name);
        if (value == null) {
            throw new Ec2Error(400, "MissingParameter", "The request must contain the parameter " + name);
        }
        return value;
    }

    /** The members of a Query-API list {@code prefix.N.field=...}, in N's order, each keyed by its field path. */
    static List<Map<String, String>> members(Map<String, String> params, String prefix) {
        TreeMap<Integer, Map<String, String>> byIndex = new TreeMap<>();
        params.forEach((key, value) -> {
            if (key.startsWith(prefix + ".")) {
                String rest = key.substring(prefix.length() + 1);
                int dot = rest.indexOf('.');
                if (dot > 0 && rest.substring(0, dot).chars().allMatch(Character::isDigit)) {
                    byIndex.computeIfAbsent(Integer.parseInt(rest.substring(0, dot)), n -> new LinkedHashMap<>())
                            .put(rest.substring(dot + 1), value);
                }
            }
        });
        return List.copyOf(byIndex.values());
    }

    /** The values of a Query-API scalar list {@code prefix.N=...}, in N's order. */
    static List<String> values(Map<String, String> params, String prefix) {
        TreeMap<Integer, String> byIndex = new TreeMap<>();
        params.forEach((key, value) -> {
            if (key.startsWith(prefix + ".") && key.substring(prefix.length() + 1).chars().allMatch(Character::isDigit)) {
                byIndex.put(Integer.parseInt(key.substring(prefix.length() + 1)), value);
            }
        });
        return List.copyOf(byIndex.values());
    }

    private static Map<String, String> prefixed(Map<String, String> params, String prefix) {
        Map<String, String> out = new LinkedHashMap<>();
        params.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k.substring(prefix.length()), v);
            }
        });
        return out;
    }

    private static String hex(long n) {
        return String.format("%017x", n);
    }
}
