/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package metrics holds the operator's own Prometheus metrics, served on
// /metrics from controller-runtime's registry (metrics.Registry) beside
// controller-runtime's (controller_runtime_reconcile_*, workqueue_*,
// rest_client_*, leader_election_master_status) and the Go and process
// collectors. No label holds an object's name or namespace: every label
// takes a value from a small fixed set.
//
// Registered when the package is imported (by internal/apply and the
// Application controller), so every process that writes children has them:
//
//   - sunstrider_operator_child_writes_total{kind, action}: counter of the
//     children (kind Deployment, Service, StatefulSet, ConfigMap...) the
//     operator wrote, by action: created (it did not exist, or was
//     deleted by someone), updated (the parent asks for something new),
//     restored (someone else changed the child and the operator put it
//     back: it took over fields another field manager owned, or the parent
//     asks for the same as at its last write).
//   - sunstrider_operator_application_ready_seconds: histogram of the time
//     from an Application's creationTimestamp to the status write that
//     first made its Ready condition True, observed once per Application
//     (UID) by the process that wrote it. A restarted operator forgets
//     which it observed: an Application that was Ready before the restart,
//     lost Ready and regained it, is observed again.
//
// Registered by the manager (cmd/main.go, Register), as they read the
// running operator at scrape time:
//
//   - sunstrider_operator_objects{kind, status, reason}: gauge of the
//     objects of each kind (Application, MyCustomResource, Guestbook,
//     Drink) in the manager's cache, by their Ready condition's status
//     (True, False, Unknown) and reason (docs/conditions.md; empty for an
//     object without Ready yet, status Unknown). Computed from the cache at
//     each scrape, so it cannot drift. Parents blocked by a foreign child
//     are status="False", reason="ResourceConflict": there is no separate
//     conflicts metric. Every replica reports it (their caches agree):
//     aggregate with max by (kind, status, reason).
//   - sunstrider_operator_webhook_certificate_expiry_timestamp_seconds:
//     gauge, the NotAfter (Unix seconds) of the certificate the webhook
//     server serves, read from its certificate file at each scrape; absent
//     when the operator serves no webhooks or has no certificate yet.
//   - sunstrider_operator_configuration_generation: gauge, the generation
//     of the OperatorConfiguration the operator put in effect (its
//     status.observedGeneration, read from the cache); absent when there is
//     no OperatorConfiguration.
//   - sunstrider_operator_access_checks_enforced: gauge, 1 when the
//     admission webhooks that check a requester's rights run (this manager
//     serves them and a ValidatingWebhookConfiguration registers them), 0
//     when they do not and the OperatorConfiguration's
//     status.effective.childAccess says Unenforced; read from its status,
//     absent when there is no OperatorConfiguration.
//
// sunstrider_operator_build_info is internal/version's.
package metrics
