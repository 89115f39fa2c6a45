/*
Copyright 2026 The sunstrider operator authors.

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

package controller

import (
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Reasons of Ready=False that every kind with children shares: each API
// group declares them with the same value (ReasonResourceConflict,
// ReasonApplyFailed in api/<group>/<version>/*_conditions.go).
const (
	// ReasonResourceConflict: an object of a child's name exists that the
	// parent does not control; it is left untouched.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonApplyFailed: the API server refused a child's write.
	ReasonApplyFailed = "ApplyFailed"
)

// Answer is what became of one child's read and write: the API server's
// answer, classified once (Children) for every kind.
type Answer string

const (
	// AnswerApplied: the child is as the parent asks (written, or already so).
	AnswerApplied Answer = "Applied"
	// AnswerConflict: an object of the child's name exists that the parent
	// does not control.
	AnswerConflict Answer = "Conflict"
	// AnswerInvalid: the API server refused the write as invalid (Invalid,
	// BadRequest): only a new spec changes that.
	AnswerInvalid Answer = "Invalid"
	// AnswerRefused: the API server refused the write otherwise: Forbidden
	// (RBAC, an admission policy), a quota, an admission webhook.
	AnswerRefused Answer = "Refused"
	// AnswerStale: the child changed between the read and the write.
	AnswerStale Answer = "Stale"
	// AnswerUnreachable: the API server did not answer (a timeout, 429,
	// 5xx, no connection).
	AnswerUnreachable Answer = "Unreachable"
)

// Retry is how a reconcile that met an answer runs again.
type Retry string

const (
	// RetryOnEvent: at the next event of the parent or of a child (a new
	// spec, the newer child's watch event).
	RetryOnEvent Retry = "next event"
	// RetryRecheck: after the conflict recheck interval. The manager caches
	// only the children it labelled, so the removal of a foreign object
	// wakes nobody.
	RetryRecheck Retry = "conflict recheck interval"
	// RetryBackoff: with the controller's rate limiter (Options), as a
	// returned error.
	RetryBackoff Retry = "backoff"
)

// Rule is one row of Policy: what an answer does to the parent's status,
// to its retry and to its events.
type Rule struct {
	// Answer is the row's answer.
	Answer Answer
	// Reason is Ready's reason while the answer holds; empty when the
	// answer leaves the status as it was (the reconcile writes none).
	Reason string
	// Class is the class of Reason: Blocked sets Stalled, whose transition
	// StatusWriter records as a Warning event.
	Class ReasonClass
	// Retry is how the reconcile runs again.
	Retry Retry
	// Meaning says it for a person (docs/conditions.md).
	Meaning string
}

// Policy is the one error→status policy of every kind: how each answer of
// the API server to a child's read or write is reported, retried and
// evented. docs/conditions.md holds it as PolicyTable renders it (a test
// keeps them equal). Behaviour that differs on purpose is named in the
// kind's own file.
var Policy = []Rule{
	{Answer: AnswerApplied, Retry: RetryOnEvent,
		Meaning: "The child holds what the parent asks; the status says how far it is"},
	{Answer: AnswerConflict, Reason: ReasonResourceConflict, Class: Blocked, Retry: RetryRecheck,
		Meaning: "An object of the child's name exists that the parent does not control: it is never adopted or " +
			"overwritten, and the parent recovers once it is gone"},
	{Answer: AnswerInvalid, Reason: ReasonApplyFailed, Class: Blocked, Retry: RetryOnEvent,
		Meaning: "The API server refused the child as invalid (the message is its own): only a new spec changes that. " +
			"The child already running is kept and reported"},
	{Answer: AnswerRefused, Reason: ReasonApplyFailed, Class: Blocked, Retry: RetryBackoff,
		Meaning: "The API server refused the child otherwise (RBAC, an admission policy, a quota): a person acts, " +
			"the operator retries meanwhile. The child already running is kept and reported"},
	{Answer: AnswerStale, Retry: RetryOnEvent,
		Meaning: "The child changed between the read and the write: nothing is written, not even the status; " +
			"the newer child's event brings the next reconcile"},
	{Answer: AnswerUnreachable, Retry: RetryBackoff,
		Meaning: "The API server did not answer: the status is left as it was"},
}

// RuleOf returns the Policy row of a.
func RuleOf(a Answer) Rule {
	for _, r := range Policy {
		if r.Answer == a {
			return r
		}
	}
	panic(fmt.Sprintf("no policy for answer %q", a))
}

// AnswerOf classifies the API server's refusal err of a child's write:
// AnswerInvalid or AnswerRefused.
func AnswerOf(err error) Answer {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return AnswerInvalid
	}
	return AnswerRefused
}

// ChildReasonClasses are the classes of the reasons Policy gives Ready.
// Every kind with children includes them in its own table (WithChildReasons).
func ChildReasonClasses() ReasonClasses {
	rc := ReasonClasses{}
	for _, r := range Policy {
		if r.Reason != "" {
			rc[r.Reason] = r.Class
		}
	}
	return rc
}

// WithChildReasons returns own, a kind's reasons, with ChildReasonClasses.
func WithChildReasons(own ReasonClasses) ReasonClasses {
	rc := ChildReasonClasses()
	maps.Copy(rc, own)
	return rc
}

// PolicyTable renders Policy as the Markdown table docs/conditions.md holds.
func PolicyTable() string {
	var b strings.Builder
	b.WriteString("| Answer | Ready's reason | Condition | Retried | Meaning |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, r := range Policy {
		reason, cond := "status unchanged", "-"
		if r.Reason != "" {
			reason = "`" + r.Reason + "`"
			cond = "`" + ConditionReconciling + "`"
			if r.Class == Blocked {
				cond = "`" + ConditionStalled + "` (Warning event)"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Answer, reason, cond, r.Retry, r.Meaning)
	}
	return b.String()
}
