/** The migration worker: runs range-copy, repair and cleanup tasks from {@code ring.tasks}. */
package io.ringshift.worker;
