package dev.gpucloud.contracts.paging;

import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.Node;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Every host ListNodes knows, page after page: a fleet of thousands of hosts does not fit in one gRPC
 * message, so a client that wants them all follows the page tokens. {@code call} makes one ListNodes call
 * (a blocking stub, or one through leader failover).
 */
public final class NodePages {

    /** More pages than any fleet has (10,000,000 hosts at 500 a page): a server that never ends is refused. */
    static final int MAX_PAGES = 20_000;

    private NodePages() {
    }

    /** All hosts {@code request} selects (its page size and token are the first page's). */
    public static List<Node> all(ListNodesRequest request, Function<ListNodesRequest, ListNodesResponse> call) {
        List<Node> nodes = new ArrayList<>();
        Set<String> tokens = new HashSet<>();
        ListNodesRequest next = request;
        for (int page = 0; page < MAX_PAGES; page++) {
            ListNodesResponse r = call.apply(next);
            nodes.addAll(r.getNodesList());
            if (r.getNextPageToken().isEmpty()) {
                return nodes;
            }
            if (!tokens.add(r.getNextPageToken())) {
                throw new IllegalStateException("ListNodes answered page token '" + r.getNextPageToken() + "' twice");
            }
            next = next.toBuilder().setPageToken(r.getNextPageToken()).build();
        }
        throw new IllegalStateException("ListNodes did not end after " + MAX_PAGES + " pages");
    }
}
