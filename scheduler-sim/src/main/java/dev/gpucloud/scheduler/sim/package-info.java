/**
 * The trace-driven simulator (issue 4): {@link dev.gpucloud.scheduler.sim.SimulateMain} is the
 * {@code gpucloud simulate} command. Sub-packages: {@code trace} (loaders), {@code cluster} (cluster
 * models, fleet specs), {@code engine} (the discrete-event loop, {@code Policy}), {@code policies}
 * (FIFO, SRTF, SRSF, Tiresias, production; the bridge to the placement framework), {@code openb} (the
 * GPU-sharing packing experiment), {@code reports} (CSV and tables) and {@code charts} (a small SVG
 * writer). Plain Java, no threads, no framework; results and commands in docs/results.md.
 */
package dev.gpucloud.scheduler.sim;
