/**
 * The dashboard's implementation, not API: the reader of the topics ({@link
 * io.ringshift.dashboard.internal.StateFeed}), the state a page shows ({@link io.ringshift.dashboard.internal.StateModel},
 * {@link io.ringshift.dashboard.internal.RingGeometry}), the nodes' health and the HTTP server.
 */
package io.ringshift.dashboard.internal;
