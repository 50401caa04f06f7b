package dev.gpucloud.autoscaler.core;

/** Where a host is in its life: asked for and not registered yet, taking work, or emptying before release. */
public enum HostState {
    LAUNCHING,
    RUNNING,
    DRAINING
}
