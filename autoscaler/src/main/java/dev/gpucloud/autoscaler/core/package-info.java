/**
 * The autoscaler's decisions as pure functions of demand (pending jobs and their shapes), supply (the hosts
 * the fleet has and those on their way), the catalog of instance types and the pools' limits. Nothing here
 * imports a framework, a provider's SDK or a clock: the service and the simulator drive the same code.
 */
package dev.gpucloud.autoscaler.core;
