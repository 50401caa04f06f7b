/**
 * The billing fold: usage intervals in, invoices out. Plain Java with no framework import (an ArchUnit
 * test enforces it), so the same code runs inside the service, in a replay tool and in plain tests.
 */
package dev.gpucloud.billing.fold;
