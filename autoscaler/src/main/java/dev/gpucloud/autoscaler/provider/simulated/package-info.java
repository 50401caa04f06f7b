/**
 * A fleet provider with no cloud behind it: instances boot after a delay, spot capacity runs out per zone, spot
 * prices walk and spot hosts are reclaimed, all from one seed on an injected clock, so the simulator's virtual
 * clock and the wall clock drive the same code.
 */
package dev.gpucloud.autoscaler.provider.simulated;
