package dev.gpucloud.agent.rest;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.inventory.EnrichedBackend;
import dev.gpucloud.agent.messaging.EventPublisher;
import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.agent.sim.SimulatedFleet;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.contracts.kafka.EventRecords;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Injects faults into simulated hosts, for demos and tests: a spot interruption notice, an XID
 * error, or the loss of the whole host. Only the simulated backend takes them (the endpoint is 404
 * otherwise: a real host's faults are real), and every parameter a fault uses is required: a missing
 * or malformed one is 400 naming it, never a default fault.
 */
@Path("/agent/faults")
public class FaultsResource {

    private static final Logger LOG = Logger.getLogger(FaultsResource.class);

    private final GpuBackend backend;
    private final SimulatedFleet fleet;
    private final EventPublisher publisher;

    public FaultsResource(GpuBackend backend, SimulatedFleet fleet, EventPublisher publisher) {
        this.backend = backend;
        this.fleet = fleet;
        this.publisher = publisher;
    }

    /**
     * {@code POST /agent/faults/{nodeId}/spot-interruption?deadline=120s},
     * {@code .../xid?gpu=0&xid=79} or {@code .../host-loss}.
     */
    @POST
    @Path("/{nodeId}/{type}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response inject(@PathParam("nodeId") String nodeId, @PathParam("type") String type,
            @QueryParam("deadline") String deadline, @QueryParam("gpu") String gpu, @QueryParam("xid") String xid) {
        if (EnrichedBackend.unwrap(backend) != fleet) {
            return error(Response.Status.NOT_FOUND, null, "fault injection is only served by the simulated backend");
        }
        if (!fleet.owns(nodeId)) {
            return error(Response.Status.NOT_FOUND, "nodeId", "no simulated host '" + Check.clip(nodeId) + "' here");
        }
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        switch (type) {
            case "spot-interruption" -> {
                if (deadline == null) {
                    return missing("deadline", "a duration such as 120s, 2m or PT30S");
                }
                Duration notice = parseDuration(deadline);
                if (notice == null || notice.compareTo(MAX_NOTICE) > 0) {
                    return error(Response.Status.BAD_REQUEST, "deadline", "deadline '" + Check.clip(deadline)
                            + "' is not a duration such as 120s, 2m or PT30S (at most " + MAX_NOTICE.toHours() + " h)");
                }
                return node(new NodeEvent(nodeId, NodeEventType.SPOT_INTERRUPTION, now, now.plus(notice), null, null,
                        "injected spot interruption: reclaimed in " + notice.toSeconds() + " s"));
            }
            case "xid" -> {
                if (gpu == null) {
                    return missing("gpu", "the index of a GPU of " + nodeId);
                }
                Integer gpuIndex = parseInt(gpu);
                Integer code = parseInt(xid);
                int gpus = backend.inventory().stream().filter(h -> h.nodeId().equals(nodeId)).findFirst()
                        .map(h -> h.gpus().size()).orElse(0);
                if (gpuIndex == null || gpuIndex < 0 || gpuIndex >= gpus) {
                    return error(Response.Status.BAD_REQUEST, "gpu", "gpu '" + Check.clip(gpu)
                            + "' is not a GPU index of " + nodeId + " (0.." + (gpus - 1) + ")");
                }
                if (xid == null) {
                    return missing("xid", "an XID error code, 1.." + Limits.XID.max());
                }
                if (code == null || code < 1 || code > Limits.XID.max()) {
                    return error(Response.Status.BAD_REQUEST, "xid", "xid '" + Check.clip(xid)
                            + "' is not an XID error code (1.." + Limits.XID.max() + ")");
                }
                return node(new NodeEvent(nodeId, NodeEventType.XID_ERROR, now, null, gpuIndex, code,
                        "injected XID " + code + " on GPU " + gpuIndex));
            }
            case "host-loss" -> {
                Reports reports = fleet.loseHost(nodeId);
                if (reports == null) {
                    return error(Response.Status.NOT_FOUND, "nodeId", "no simulated host '" + nodeId + "' here");
                }
                publisher.publish(reports).await().atMost(Duration.ofSeconds(10));
                publisher.send(EventRecords.tombstone(Topics.GPU_INVENTORY, nodeId, EventPublisher.source(nodeId)))
                        .subscribe().with(ok -> { }, e -> LOG.warnf("tombstone of lost %s not sent: %s", nodeId,
                                e.getMessage()));
                LOG.warnf("injected host loss: %s, %d allocation(s) lost", nodeId, reports.allocationEvents().size());
                return Response.ok(Map.of("nodeId", nodeId, "type", type,
                        "lostAllocations", reports.allocationEvents().stream().map(e -> e.allocationId()).toList()))
                        .build();
            }
            default -> {
                return error(Response.Status.BAD_REQUEST, "type", "unknown fault type '" + Check.clip(type)
                        + "'; one of spot-interruption, xid, host-loss");
            }
        }
    }

    private Response node(NodeEvent event) {
        LOG.warnf("injected %s on %s: %s", event.type(), event.nodeId(), event.detail());
        publisher.spool(List.of(EventPublisher.record(Topics.NODE_EVENTS, event.nodeId(), event, event.nodeId())));
        return Response.ok(event).build();
    }

    /** The longest spot notice one may inject: clouds give two minutes, a day is already generous. */
    static final Duration MAX_NOTICE = Duration.ofDays(1);

    private static Response missing(String parameter, String what) {
        return error(Response.Status.BAD_REQUEST, parameter, "parameter '" + parameter + "' is required: " + what);
    }

    /** {"error": message, "parameter": name} (the parameter at fault, when one is). */
    private static Response error(Response.Status status, String parameter, String message) {
        Map<String, String> body = parameter == null ? Map.of("error", message)
                : Map.of("error", message, "parameter", parameter);
        return Response.status(status).type(MediaType.APPLICATION_JSON).entity(body).build();
    }

    private static Integer parseInt(String text) {
        try {
            return Integer.parseInt(text.strip());
        } catch (RuntimeException e) {
            return null;
        }
    }

    static Duration parseDuration(String text) {
        if (text == null || text.isBlank() || text.length() > 32) {
            return null;
        }
        String t = text.strip();
        try {
            if (t.startsWith("P") || t.startsWith("p")) {
                return Duration.parse(t);
            }
            long unit = switch (t.charAt(t.length() - 1)) {
                case 's' -> 1;
                case 'm' -> 60;
                case 'h' -> 3600;
                default -> 0;
            };
            long n = unit == 0 ? Long.parseLong(t) : Long.parseLong(t.substring(0, t.length() - 1)) * unit;
            return n < 0 ? null : Duration.ofSeconds(n);
        } catch (NumberFormatException | DateTimeParseException e) {
            return null;
        }
    }
}
