package dev.gpucloud.contracts.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fields added for MIG slots and RDMA NIC ports, and that records from older producers still decode. */
class MigAndRdmaContractTest {

    @Test
    void inventory_without_rdma_nics_from_an_older_agent_decodes_with_none() {
        String json = EventCodec.encodeToString(Samples.inventory()).replaceAll(",\"rdmaNics\":\\[[^]]*]", "");
        assertThat(json).doesNotContain("rdmaNics");
        HostInventory decoded = EventCodec.decode(Topics.GPU_INVENTORY, json.getBytes(StandardCharsets.UTF_8));
        assertThat(decoded.rdmaNics()).isEmpty();
        assertThat(decoded.hasActiveRdma()).isFalse();
        assertThat(Samples.inventory().hasActiveRdma()).isTrue();
    }

    @Test
    void rdma_nic_fields_are_checked_by_name() {
        assertThatThrownBy(() -> new RdmaNic(" ", 1, "ACTIVE", "InfiniBand", 200)).hasMessageContaining("'device'");
        assertThatThrownBy(() -> new RdmaNic("mlx5_0", 0, "ACTIVE", "InfiniBand", 200)).hasMessageContaining("'port'");
        assertThatThrownBy(() -> new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", Double.NaN))
                .hasMessageContaining("'rateGbps'");
        assertThatThrownBy(() -> new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", -1)).hasMessageContaining("'rateGbps'");
        assertThat(new RdmaNic("mlx5_1", 1, "DOWN", "Ethernet", 0).active()).isFalse();
    }

    @Test
    void mig_placement_start_is_optional_and_bounded() {
        assertThat(new MigInstance(1, "1g.10gb", "MIG-1", 9_856).placementStart()).isNull();
        assertThatThrownBy(() -> new MigInstance(1, "1g.10gb", "MIG-1", 9_856, 8))
                .hasMessageContaining("'placementStart'");
    }

    @Test
    void a_start_names_a_mig_slot_or_an_instance() {
        NodeCommand command = Samples.nodeCommand();
        assertThat(command.migSlot()).isEmpty();
        assertThat(NodeCommand.MigSlot.parse("3g.40gb@4")).contains(new NodeCommand.MigSlot("3g.40gb", 4));
        assertThat(NodeCommand.MigSlot.parse("1g.10gb+me@6")).contains(new NodeCommand.MigSlot("1g.10gb+me", 6));
        assertThat(NodeCommand.MigSlot.parse("MIG-4f2a")).isEmpty();
        assertThat(NodeCommand.MigSlot.parse("3g.40gb@8")).isEmpty();
        assertThat(NodeCommand.MigSlot.parse("3g.40gb@")).isEmpty();
        assertThat(NodeCommand.MigSlot.parse("9g.10gb@0")).as("no GPU has 9 compute slices").isEmpty();
        assertThat(new NodeCommand.MigSlot("2g.20gb", 2).toString()).isEqualTo("2g.20gb@2");
    }

    @Test
    void started_event_carries_the_mig_instance_it_ran_on() {
        AllocationEvent started = new AllocationEvent("alloc-1", "job-1", "node-a100-1", AllocationEventType.STARTED,
                Samples.T0, null, null, null, "MIG-4f2a");
        byte[] bytes = EventCodec.encode(started);
        assertThat(EventCodec.decode(Topics.ALLOCATION_EVENTS, bytes)).isEqualTo(started);
        assertThat(Samples.allocationEvent().migInstanceUuid()).isNull();
        assertThatThrownBy(() -> new AllocationEvent("alloc-1", "job-1", "node-a100-1", AllocationEventType.STARTED,
                Samples.T0, null, null, null, " ")).hasMessageContaining("'migInstanceUuid'");
        assertThat(List.of(started)).hasSize(1);
    }

    @Test
    void a_start_refused_for_busy_gpus_is_lost_and_names_who_holds_them() {
        AllocationEvent busy = AllocationEvent.busy("alloc-2", "job-1", "node-a100-1", Samples.T0,
                "cannot start: GPU 0 on node-a100-1 is busy with alloc-1", List.of("alloc-1"));
        assertThat(busy.type()).isEqualTo(AllocationEventType.LOST);
        assertThat(EventCodec.decode(Topics.ALLOCATION_EVENTS, EventCodec.encode(busy))).isEqualTo(busy);

        String older = EventCodec.encodeToString(Samples.allocationEvent()).replaceAll(",\"heldBy\":\\[[^]]*]", "");
        assertThat(older).doesNotContain("heldBy");
        AllocationEvent decoded = EventCodec.decode(Topics.ALLOCATION_EVENTS, older.getBytes(StandardCharsets.UTF_8));
        assertThat(decoded.heldBy()).as("an older agent's event names no holder").isEmpty();

        assertThatThrownBy(() -> new AllocationEvent("alloc-2", "job-1", "node-a100-1", AllocationEventType.EXITED,
                Samples.T0, 125, null, null, null, List.of("alloc-1"))).hasMessageContaining("heldBy is only for LOST");
        assertThatThrownBy(() -> AllocationEvent.busy("alloc-2", "job-1", "node-a100-1", Samples.T0, null,
                List.of(" "))).hasMessageContaining("'heldBy'");
        List<String> many = java.util.stream.IntStream.range(0, AllocationEvent.MAX_HELD_BY + 1)
                .mapToObj(i -> "a" + i).toList();
        assertThatThrownBy(() -> new AllocationEvent("alloc-2", "job-1", "node-a100-1", AllocationEventType.LOST,
                Samples.T0, null, null, null, null, many)).hasMessageContaining("at most " + AllocationEvent.MAX_HELD_BY);

        // a GPU shared by hundreds of fractions: the answer is still one the contract takes
        List<String> hundreds = java.util.stream.IntStream.range(0, 900).mapToObj(i -> "frac-" + "x".repeat(100) + i)
                .toList();
        AllocationEvent crowded = AllocationEvent.busy("alloc-2", "job-1", "node-a100-1", Samples.T0,
                "cannot start: GPU 0 is busy with " + String.join(", ", hundreds), hundreds);
        assertThat(crowded.heldBy()).hasSize(AllocationEvent.MAX_HELD_BY).startsWith("frac-" + "x".repeat(100) + 0);
        assertThat(crowded.detail()).hasSizeLessThanOrEqualTo((int) dev.gpucloud.contracts.limits.Limits.DETAIL.max())
                .endsWith("...");
        assertThat(EventCodec.decode(Topics.ALLOCATION_EVENTS, EventCodec.encode(crowded))).isEqualTo(crowded);
    }

    @Test
    void a_start_that_came_after_its_start_by_time_is_lost_and_says_which_time() {
        AllocationEvent late = AllocationEvent.late("alloc-2", "job-1", "node-a100-1", Samples.T0.plusSeconds(30),
                "cannot start: the START came late", Samples.T0);
        assertThat(late.type()).isEqualTo(AllocationEventType.LOST);
        assertThat(EventCodec.decode(Topics.ALLOCATION_EVENTS, EventCodec.encode(late))).isEqualTo(late);
        assertThat(Samples.allocationEvent().startBy()).isNull();
        assertThatThrownBy(() -> new AllocationEvent("alloc-2", "job-1", "node-a100-1", AllocationEventType.STARTED,
                Samples.T0, null, null, null, null, null, Samples.T0)).hasMessageContaining("startBy is only for LOST");
    }
}
