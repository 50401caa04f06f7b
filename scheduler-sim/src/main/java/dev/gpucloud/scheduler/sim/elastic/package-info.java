/**
 * The elastic fleet on a trace: the autoscaler's pure core decides every scan interval on a virtual clock, the
 * simulated provider boots, prices and reclaims its hosts, and jobs run first-fit in FIFO order on what is up;
 * static fleets sized for the peak and the mean of demand run the same jobs with the same placement for comparison.
 */
package dev.gpucloud.scheduler.sim.elastic;
