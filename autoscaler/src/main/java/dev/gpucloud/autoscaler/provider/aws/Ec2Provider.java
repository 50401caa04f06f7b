package dev.gpucloud.autoscaler.provider.aws;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.provider.FleetProvider;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.LaunchOutcome.LaunchError;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.CreateFleetResponse;
import software.amazon.awssdk.services.ec2.model.DescribeInstancesRequest;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.PlacementStrategy;

/**
 * AWS EC2 as a fleet: a launch is one instant EC2 Fleet (and a second, on demand, for what spot could not give when
 * the request allows it); hosts carry the tags {@code gpucloud:fleet}, {@code gpucloud:pool} and
 * {@code gpucloud:request}, and {@link #instances()} finds them by the fleet tag alone, so a host whose launch the
 * caller lost (a crash between the call and its record) still shows and can be released.
 *
 * <p>Throttling ({@code RequestLimitExceeded}) and 5xx are retried by the client's retry strategy
 * ({@link Ec2Clients}); a launch call that still fails is not thrown but answered as a {@link LaunchOutcome} with one
 * {@link LaunchError} carrying EC2's error code (or {@link #UNREACHABLE} when no answer came), so the caller's
 * bookkeeping of refusals sees it like a capacity shortage. {@link #release} and {@link #instances()} have no outcome
 * to carry a failure in: they throw the SDK's exception, and the reconciler tries again on its next round.
 */
public final class Ec2Provider implements FleetProvider {

    /** The tag that marks a host as this fleet's; {@link #instances()} lists by it. */
    public static final String FLEET_TAG = "gpucloud:fleet";
    /** The pool a host was launched for. */
    public static final String POOL_TAG = "gpucloud:pool";
    /** The launch request a host came from. */
    public static final String REQUEST_TAG = "gpucloud:request";
    /** The error code of a launch call that got no answer from EC2 at all (network, retries spent on I/O). */
    public static final String UNREACHABLE = "Ec2Unreachable";
    /** EC2 terminates at most this many instances per call. */
    static final int TERMINATE_BATCH = 1000;

    private static final Pattern INSTANCE_ID = Pattern.compile("i-[0-9A-Za-z]+");
    private static final List<String> LIVE_STATES = List.of("pending", "running", "shutting-down", "stopping", "stopped");

    private final Ec2Client ec2;
    private final Ec2ProviderConfig config;
    private final InstantFleetRequests fleets;
    private final Ec2Instances mapping;

    public Ec2Provider(Ec2Client ec2, Ec2ProviderConfig config, Clock clock) {
        this.ec2 = Objects.requireNonNull(ec2, "ec2");
        this.config = Objects.requireNonNull(config, "config");
        this.fleets = new InstantFleetRequests(config);
        this.mapping = new Ec2Instances(config, clock);
    }

    public Ec2Provider(Ec2Client ec2, Ec2ProviderConfig config) {
        this(ec2, config, Clock.systemUTC());
    }

    @Override
    public String name() {
        return "aws";
    }

    /**
     * One instant fleet for the request's capacity; when spot fell short and the request allows it, a second one on
     * demand for the rest. The spot refusals stay in the outcome beside the on-demand hosts that made up for them (each
     * host says its capacity), so the caller can see that the fallback was taken and why.
     */
    @Override
    public LaunchOutcome launch(LaunchRequest request) {
        List<LaunchError> errors = new ArrayList<>();
        if (request.placementGroup() != null) {
            try {
                ensurePlacementGroup(request.placementGroup());
            } catch (SdkException e) {
                errors.add(failure(e, request.capacity()));
                return new LaunchOutcome(List.of(), errors);
            }
        }
        List<ProviderInstance> launched = new ArrayList<>();
        boolean answered = createFleet(request, request.capacity(), request.count(), "", launched, errors);
        int shortfall = request.count() - launched.size();
        if (answered && shortfall > 0 && request.capacity() == Capacity.SPOT && request.onDemandFallback()) {
            createFleet(request, Capacity.ON_DEMAND, shortfall, "on-demand", launched, errors);
        }
        return new LaunchOutcome(launched, errors);
    }

    private boolean createFleet(
            LaunchRequest request, Capacity capacity, int count, String step,
            List<ProviderInstance> launched, List<LaunchError> errors) {
        String token = InstantFleetRequests.clientToken(request.requestId(), step);
        CreateFleetResponse response;
        try {
            response = ec2.createFleet(fleets.build(request, capacity, count, token));
        } catch (SdkException e) {
            errors.add(failure(e, capacity));
            return false;
        }
        launched.addAll(mapping.launched(request, capacity, response.instances()));
        errors.addAll(mapping.refused(capacity, response.errors()));
        return true;
    }

    /** A cluster placement group of this name; one that exists already (another gang's, or a retry) is fine. */
    private void ensurePlacementGroup(String name) {
        try {
            ec2.createPlacementGroup(r -> r.groupName(name).strategy(PlacementStrategy.CLUSTER));
        } catch (AwsServiceException e) {
            if (!"InvalidPlacementGroup.Duplicate".equals(errorCode(e))) {
                throw e;
            }
        }
    }

    /**
     * Terminates in batches of {@value #TERMINATE_BATCH}. EC2 refuses a whole call when one id is unknown
     * ({@code InvalidInstanceID.NotFound}, naming the ids): those are dropped and the rest sent again.
     */
    @Override
    public void release(Collection<String> instanceIds) {
        List<String> ids = List.copyOf(new LinkedHashSet<>(instanceIds));
        for (int from = 0; from < ids.size(); from += TERMINATE_BATCH) {
            terminate(new LinkedHashSet<>(ids.subList(from, Math.min(ids.size(), from + TERMINATE_BATCH))));
        }
    }

    private void terminate(Set<String> batch) {
        while (!batch.isEmpty()) {
            try {
                ec2.terminateInstances(r -> r.instanceIds(batch));
                return;
            } catch (AwsServiceException e) {
                String code = errorCode(e);
                if (!"InvalidInstanceID.NotFound".equals(code) && !"InvalidInstanceID.Malformed".equals(code)) {
                    throw e;
                }
                Set<String> unknown = idsNamedIn(e);
                if (!batch.removeAll(unknown)) {
                    terminateOneByOne(batch);
                    return;
                }
            }
        }
    }

    /** When EC2's message names no id of the batch, each id is tried alone, so one unknown id cannot hide the rest. */
    private void terminateOneByOne(Set<String> batch) {
        for (String id : batch) {
            try {
                ec2.terminateInstances(r -> r.instanceIds(id));
            } catch (AwsServiceException e) {
                String code = errorCode(e);
                if (!"InvalidInstanceID.NotFound".equals(code) && !"InvalidInstanceID.Malformed".equals(code)) {
                    throw e;
                }
            }
        }
    }

    /** Every host tagged with this fleet that is not terminated, over all pages. */
    @Override
    public List<ProviderInstance> instances() {
        var request = DescribeInstancesRequest.builder()
                .filters(
                        Filter.builder().name("tag:" + FLEET_TAG).values(config.fleetName()).build(),
                        Filter.builder().name("instance-state-name").values(LIVE_STATES).build())
                .maxResults(1000)
                .build();
        List<ProviderInstance> instances = new ArrayList<>();
        for (var page : ec2.describeInstancesPaginator(request)) {
            for (var reservation : page.reservations()) {
                for (var instance : reservation.instances()) {
                    instances.add(mapping.described(instance));
                }
            }
        }
        return instances;
    }

    private static LaunchError failure(SdkException e, Capacity capacity) {
        String code = e instanceof AwsServiceException service ? errorCode(service) : UNREACHABLE;
        String message = e instanceof AwsServiceException service && service.awsErrorDetails() != null
                ? service.awsErrorDetails().errorMessage()
                : e.getMessage();
        return new LaunchError(code == null ? UNREACHABLE : code, message, null, capacity);
    }

    private static String errorCode(AwsServiceException e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }

    private static Set<String> idsNamedIn(AwsServiceException e) {
        Set<String> ids = new LinkedHashSet<>();
        String message = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorMessage();
        if (message != null) {
            Matcher m = INSTANCE_ID.matcher(message);
            while (m.find()) {
                ids.add(m.group());
            }
        }
        return ids;
    }
}
