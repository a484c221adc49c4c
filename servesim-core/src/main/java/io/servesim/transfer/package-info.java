/** Bandwidth-shared byte transfers between endpoints: the service KV tiers and cross-worker pulls build on. */
package io.servesim.transfer;
