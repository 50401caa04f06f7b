package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.secrets.AgentSeal;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.scheduler.service.config.EnrolmentKey;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Which enrolled agent speaks for each host, and the sealing of a START's secret values for it (docs/security.md,
 * "Secret job variables"). A host's agent is the one that signed the host's last verified inventory record (every
 * agent describes its hosts there when it starts, so a re-enrolled agent is known at once; telemetry is not looked
 * at, to keep this off its per-sample path); it lives in memory only, since every instance reads inventory from the start of its compacted topic
 * and so knows it again after a restart or a takeover, and with a key configured the scheduler knows no host but
 * from verified inventory.
 *
 * <p>Without an enrolment key nothing is checked or sealed: secret values go to the agent in the clear, as on a
 * broker without logins (the services' tests). With one, a START whose host's agent is not known has its values
 * withheld ({@link AgentSeal#WITHHELD}): the agent fails that worker saying why, as any START it cannot run, and
 * the job's retry policy takes it from there; never the value in the clear.
 */
@ApplicationScoped
public class HostAgents {

    private static final Logger LOG = Logger.getLogger(HostAgents.class);

    private final Enrolment.Verifier enrolment;
    private final Map<String, Enrolment.Agent> agents = new ConcurrentHashMap<>();

    public HostAgents(EnrolmentKey key) {
        this.enrolment = key.verifier();
    }

    /** Whether START's secret values are sealed for their agent (an enrolment key is configured). */
    public boolean seals() {
        return enrolment != null;
    }

    /**
     * A record about {@code nodeId} passed the enrolment check, signed by {@code agent} (null: an unsigned record,
     * taken only without a key, so nothing to remember).
     */
    public void heard(String nodeId, Enrolment.Agent agent) {
        if (enrolment == null || agent == null) {
            return;
        }
        Enrolment.Agent before = agents.put(nodeId, agent);
        if (before != null && !agent.equals(before)) { // a re-enrolment, or a second agent claiming the host
            LOG.infof("host %s is now spoken for by agent %s (enrolled for %s), before by %s (%s): its STARTs'"
                    + " secrets are sealed for the new one", nodeId, agent.id(), agent.hostList(), before.id(),
                    before.hostList());
        }
    }

    /** The host left (an inventory tombstone): no secret is sealed for its agent any more. */
    public void left(String nodeId) {
        agents.remove(nodeId);
    }

    /** The agent last heard for {@code nodeId}; null when none is known. */
    Enrolment.Agent agentOf(String nodeId) {
        return agents.get(nodeId);
    }

    /**
     * {@code command} as it may be written to the outbox: a START's secret values sealed for its host's agent, or
     * withheld when that agent is not known; as it is without a key, and for any other command.
     */
    NodeCommand sealed(NodeCommand command) {
        if (enrolment == null || command.type() != NodeCommandType.START || command.secretEnv().isEmpty()) {
            return command;
        }
        Enrolment.Agent agent = agents.get(command.nodeId());
        if (agent == null) {
            try (LogFields fields = LogFields.of(LogFields.JOB_ID, command.jobId(), LogFields.TENANT, command.tenant(),
                    LogFields.NODE_ID, command.nodeId(), LogFields.ALLOCATION_ID, command.allocationId())) {
                LOG.warnf("%s of %s goes to host %s, whose enrolled agent this scheduler has not heard from: its"
                        + " secret variables %s are withheld, and the agent will fail it", command.allocationId(),
                        command.jobId(), command.nodeId(), command.secretEnv().keySet());
            }
            return AgentSeal.withhold(command);
        }
        return enrolment.sealFor(agent).seal(command);
    }
}
