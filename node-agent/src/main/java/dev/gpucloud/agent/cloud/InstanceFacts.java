package dev.gpucloud.agent.cloud;

/** What the metadata service says about the instance; a field it did not give is null. */
public record InstanceFacts(String instanceType, String zone, String capacityType) {
}
