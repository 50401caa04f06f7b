package dev.gpucloud.autoscaler.provider.aws;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A small EC2 that speaks the real wire protocol, so the provider is tested through the AWS SDK's own marshalling,
 * signing, retries, unmarshalling and pagination: a JDK HTTP server taking the EC2 Query API (form-encoded POSTs of
 * {@code Action=...&Version=2016-11-15}) and answering XML in EC2's namespace, or EC2's error document
 * ({@code <Response><Errors><Error><Code>}) with its HTTP status. It keeps every call's parameters so a test can
 * say what the provider asked for, and can be told to refuse the next calls (throttling, 503).
 *
 * <p>The fleet itself (capacity per zone, instances, placement groups) lives in {@link Ec2StandInFleet}.
 */
final class Ec2StandIn implements AutoCloseable {

    static final String NAMESPACE = "http://ec2.amazonaws.com/doc/2016-11-15/";
    static final String API_VERSION = "2016-11-15";

    /** An error as EC2 returns it: the whole call refused, with a code, a message and an HTTP status. */
    static final class Ec2Error extends RuntimeException {
        final int status;
        final String code;

        Ec2Error(int status, String code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }

    /** One call as it came over the wire: its action and its decoded form parameters. */
    record Call(String action, Map<String, String> params) {
        String param(String name) {
            return params.get(name);
        }
    }

    private final HttpServer server;
    private final Ec2StandInFleet fleet = new Ec2StandInFleet();
    private final List<Call> calls = new ArrayList<>();
    private final Deque<ScriptedFailure> scriptedFailures = new ArrayDeque<>();

    /** A refusal waiting for a call: of any action (null) or of one, after letting {@code skip} such calls through. */
    private static final class ScriptedFailure {
        final String action;
        int skip;
        final Ec2Error error;

        ScriptedFailure(String action, int skip, Ec2Error error) {
            this.action = action;
            this.skip = skip;
            this.error = error;
        }
    }

    private Ec2StandIn(HttpServer server) {
        this.server = server;
    }

    /** Starts on an ephemeral port of the loopback interface. */
    static Ec2StandIn start() {
        try {
            var server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            var standIn = new Ec2StandIn(server);
            server.createContext("/", standIn::handle);
            server.start();
            return standIn;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    Ec2StandInFleet fleet() {
        return fleet;
    }

    /** The next {@code n} calls, whatever their action, are throttled as EC2 throttles: 503 RequestLimitExceeded. */
    synchronized Ec2StandIn throttleNext(int n) {
        return failNext(n, 503, "RequestLimitExceeded", "Request limit exceeded.");
    }

    /** The next {@code n} calls fail with this status and code. */
    synchronized Ec2StandIn failNext(int n, int status, String code, String message) {
        for (int i = 0; i < n; i++) {
            scriptedFailures.add(new ScriptedFailure(null, 0, new Ec2Error(status, code, message)));
        }
        return this;
    }

    /** The calls of {@code action} after the next {@code skip} of them fail, {@code n} times, with this status and code. */
    synchronized Ec2StandIn failAction(String action, int skip, int n, int status, String code, String message) {
        for (int i = 0; i < n; i++) {
            scriptedFailures.add(new ScriptedFailure(action, skip, new Ec2Error(status, code, message)));
        }
        return this;
    }

    /** Every call that reached the stand-in, refused ones included, in order. */
    synchronized List<Call> calls() {
        return List.copyOf(calls);
    }

    /** The calls of one action. */
    synchronized List<Call> calls(String action) {
        return calls.stream().filter(c -> c.action().equals(action)).toList();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            Map<String, String> params = parseForm(body);
            String requestId = UUID.randomUUID().toString();
            int status;
            String xml;
            try {
                xml = dispatch(exchange.getRequestMethod(), params, requestId);
                status = 200;
            } catch (Ec2Error e) {
                status = e.status;
                xml = errorDocument(e, requestId);
            }
            byte[] bytes = xml.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/xml;charset=UTF-8");
            exchange.getResponseHeaders().add("x-amzn-RequestId", requestId);
            exchange.sendResponseHeaders(status, bytes.length);
            exchange.getResponseBody().write(bytes);
        }
    }

    private synchronized String dispatch(String method, Map<String, String> params, String requestId) {
        String action = params.getOrDefault("Action", "");
        calls.add(new Call(action, params));
        if (!"POST".equals(method)) {
            throw new Ec2Error(400, "InvalidAction", "The stand-in takes the Query API over POST only");
        }
        if (!API_VERSION.equals(params.get("Version"))) {
            throw new Ec2Error(400, "InvalidParameterValue", "Unsupported API version: " + params.get("Version"));
        }
        Ec2Error failure = nextFailure(action);
        if (failure != null) {
            throw failure;
        }
        String result = switch (action) {
            case "CreateFleet" -> fleet.createFleet(params);
            case "DescribeInstances" -> fleet.describeInstances(params);
            case "TerminateInstances" -> fleet.terminateInstances(params);
            case "CreatePlacementGroup" -> fleet.createPlacementGroup(params);
            default -> throw new Ec2Error(400, "InvalidAction", "The action " + action + " is not valid for this web service.");
        };
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<" + action + "Response xmlns=\"" + NAMESPACE + "\">"
                + "<requestId>" + requestId + "</requestId>" + result + "</" + action + "Response>";
    }

    private Ec2Error nextFailure(String action) {
        var first = scriptedFailures.peek();
        if (first == null || (first.action != null && !first.action.equals(action))) {
            return null;
        }
        if (first.skip > 0) {
            scriptedFailures.stream().filter(f -> action.equals(f.action)).forEach(f -> f.skip--);
            return null;
        }
        return scriptedFailures.poll().error;
    }

    private static String errorDocument(Ec2Error e, String requestId) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>" + escape(e.code)
                + "</Code><Message>" + escape(e.getMessage()) + "</Message></Error></Errors><RequestID>" + requestId
                + "</RequestID></Response>";
    }

    static Map<String, String> parseForm(String body) {
        Map<String, String> params = new LinkedHashMap<>();
        if (body.isEmpty()) {
            return params;
        }
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            params.put(URLDecoder.decode(key, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
        }
        return params;
    }

    /** {@code <name>value</name>}, escaped; nothing when the value is null. */
    static String element(String name, Object value) {
        return value == null ? "" : "<" + name + ">" + escape(String.valueOf(value)) + "</" + name + ">";
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
