/**
 * Pure packing math for GPU-sharing placement: how fragmented a node is, and which node and GPUs a
 * task should take. No framework, no state beyond what is passed in; the simulator's openb
 * experiment and the production framework's Score plugin call the same code.
 *
 * <h2>Model</h2>
 * GPUs are counted in milli-GPU (1000 = one whole GPU). A task ({@link TaskShape}) asks for
 * {@code numGpu} GPUs: 0 (CPU only), 1 with {@code gpuMilli} 1..1000 (a share of one GPU, which may
 * be shared with other tasks), or k &gt; 1 whole GPUs ({@code gpuMilli} 1000) on one node; plus CPU
 * milli-cores and memory MiB, and optionally a GPU model (null: any). A node ({@link NodeView}) is
 * what is free on it now: free milli per GPU, free CPU and memory, and its GPU model.
 *
 * <h2>API</h2>
 * <pre>{@code
 * record NodeView(String id, int[] gpuFreeMilli, long cpuFreeMilli, long memoryFreeMib, String gpuModel,
 *                long cpuCapacityMilli)
 * record TaskShape(int numGpu, int gpuMilli, long cpuMilli, long memoryMib, String gpuModel)
 * record Distribution(List<Distribution.Entry> entries)     // Entry(TaskShape shape, double weight), weights sum to 1
 *     Distribution.of(Collection<TaskShape> tasks, double coverage)   // most common shapes covering e.g. 0.95
 * record GpuChoice(int[] gpuIndexes)                         // which GPUs of the node; empty for CPU-only tasks
 *
 * // FGD (Weng et al., ATC'23), all in milli-GPU:
 * FragmentationScorer.fragmentation(NodeView n, TaskShape m)          // GPU milli of n that m cannot use
 * FragmentationScorer.fragmentation(NodeView n, Distribution d)       // expected over d
 * FragmentationScorer.score(NodeView n, TaskShape t, Distribution d)  // OptionalDouble: the fragmentation
 *     // increase of placing t on n at its best GPUs (lower is better; may be negative); empty if t does not fit
 * FragmentationScorer.bestGpus(NodeView n, TaskShape t, Distribution d) // Optional<GpuChoice> achieving score
 * new FgdScorer(d).best(n, t)          // the same, memoising F by node content: use it when scoring many nodes
 *
 * // Node choice over a list of nodes (one task at a time):
 * interface PackingPolicy { Optional<Placement> place(List<NodeView> nodes, TaskShape t); }
 * record Placement(int nodeIndex, GpuChoice gpus, double score)
 * PackingPolicies.fgd(Distribution d), PackingPolicies.bestFit(), PackingPolicies.random(long seed)
 *
 * Fits.fits(NodeView n, TaskShape t)   // CPU, memory, model and GPUs all fit
 * }</pre>
 *
 * <h2>Fragmentation (FGD)</h2>
 * For a node n and a task m: if m cannot be placed on n at all (CPU, memory, model, or not enough
 * GPU), every free GPU milli of n is a fragment: F(n,m) = sum of free milli. Otherwise the fragments are
 * the GPUs whose free milli is below min(m's per-GPU milli, 1000): a GPU with 300 free is a fragment
 * for a 500-milli share and for whole-GPU tasks, but not for a 200-milli share; CPU-only tasks that fit
 * see no fragment. F(n, d) = sum over shapes m of weight(m) x F(n, m). Placing t on n (at GPUs g)
 * changes it by delta = F(n after, d) - F(n before, d); FGD picks the node and GPUs with the least
 * delta. Ties: the node with the lower index, the GPU with the lower index.
 *
 * <h2>BestFit</h2>
 * Least leftover on the node after placement: leftover = free GPU milli left / (GPUs x 1000) + free
 * CPU left / CPU capacity (each share of the node's own capacity); within the node, the GPU with the
 * least free milli that fits. Random: a uniformly random node that fits, and a random fitting
 * GPU.
 */
package dev.gpucloud.scheduler.packing;
