package dev.gpucloud.agent.cloud;

import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Polls a cloud's metadata service and turns each new notice into a node event for every host
 * this agent speaks for, once: the same notice seen on the next poll is not published again. A
 * metadata service that fails, hangs or answers garbage is logged (once until it changes or
 * recovers) and polled again next time; it never stops the agent.
 */
public final class NoticeWatcher {

    private final MetadataProvider provider;
    private final List<String> nodeIds;
    private final Clock clock;
    private final Consumer<String> log;
    private final Set<String> published = new HashSet<>();
    private String lastProblem;

    public NoticeWatcher(MetadataProvider provider, List<String> nodeIds, Clock clock, Consumer<String> log) {
        this.provider = provider;
        this.nodeIds = List.copyOf(nodeIds);
        this.clock = clock;
        this.log = log;
    }

    public MetadataProvider provider() {
        return provider;
    }

    /** The node events for notices not seen before; none when the service cannot be read. */
    public synchronized List<NodeEvent> poll() {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        List<CloudNotice> notices;
        try {
            notices = provider.notices(now);
        } catch (MetadataException | RuntimeException e) {
            String problem = provider.cloud() + " metadata: " + e.getMessage();
            if (!problem.equals(lastProblem)) {
                log.accept(problem + " (polling goes on)");
                lastProblem = problem;
            }
            return List.of();
        }
        if (lastProblem != null) {
            log.accept(provider.cloud() + " metadata answers again");
            lastProblem = null;
        }
        List<NodeEvent> events = new ArrayList<>();
        for (CloudNotice notice : notices) {
            if (!published.add(notice.kind() + "/" + notice.id())) {
                continue;
            }
            NodeEventType type = notice.kind() == CloudNotice.Kind.SPOT_INTERRUPTION
                    ? NodeEventType.SPOT_INTERRUPTION : NodeEventType.REBALANCE_RECOMMENDATION;
            for (String nodeId : nodeIds) {
                events.add(new NodeEvent(nodeId, type, now, notice.deadline(), null, null, notice.detail()));
            }
        }
        return events;
    }
}
