package dev.gpucloud.scheduler.packing;

import java.util.List;
import java.util.Optional;

/** Chooses a node and GPUs for one task among nodes as they are now; empty when it fits nowhere. */
public interface PackingPolicy {

    String name();

    Optional<Placement> place(List<NodeView> nodes, TaskShape task);
}
