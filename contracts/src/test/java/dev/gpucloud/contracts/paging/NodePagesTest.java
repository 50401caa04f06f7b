package dev.gpucloud.contracts.paging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.Node;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodePagesTest {

    private static Node node(int i) {
        return Node.newBuilder().setNodeId(String.format("n-%05d", i)).build();
    }

    @Test
    void followsThePageTokensToTheEndAndKeepsTheFilter() {
        List<ListNodesRequest> asked = new ArrayList<>();
        List<Node> all = NodePages.all(ListNodesRequest.newBuilder().setGpuModel("A100").build(), r -> {
            asked.add(r);
            int from = r.getPageToken().isEmpty() ? 0 : Integer.parseInt(r.getPageToken());
            ListNodesResponse.Builder b = ListNodesResponse.newBuilder();
            for (int i = from; i < Math.min(from + 500, 1_234); i++) {
                b.addNodes(node(i));
            }
            if (from + 500 < 1_234) {
                b.setNextPageToken(Integer.toString(from + 500));
            }
            return b.build();
        });
        assertThat(all).hasSize(1_234);
        assertThat(all.get(1_233).getNodeId()).isEqualTo("n-01233");
        assertThat(asked).extracting(ListNodesRequest::getPageToken).containsExactly("", "500", "1000");
        assertThat(asked).allSatisfy(r -> assertThat(r.getGpuModel()).isEqualTo("A100"));
    }

    @Test
    void aServerThatRepeatsATokenIsRefusedRatherThanFollowedForEver() {
        assertThatThrownBy(() -> NodePages.all(ListNodesRequest.getDefaultInstance(),
                r -> ListNodesResponse.newBuilder().addNodes(node(1)).setNextPageToken("same").build()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'same' twice");
    }
}
