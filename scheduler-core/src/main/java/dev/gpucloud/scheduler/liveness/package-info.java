/**
 * Which allocations are still alive, decided on evidence only: a host silent past its timeout
 * (measured from when this scheduler could first hear it), a spot host reclaimed, or the host's agent
 * saying what it runs. Plain Java, driven by the scheduler service's clock and reports.
 */
package dev.gpucloud.scheduler.liveness;
