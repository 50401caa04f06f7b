/** The boundary between the agent and the GPUs it reads; plain Java, no framework. */
package dev.gpucloud.agent.backend;
