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

package apply

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// RefusalMessage is the condition message, written for a person, of a
// child's write the API server refused with err.
func RefusalMessage(kind string, err error) string {
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	return fmt.Sprintf("The API server refused the %s: %s", kind, msg)
}

// Answered is the operator's error policy: it tells whether err is an
// answer of the API server about the request (Invalid, Forbidden, a quota,
// a Conflict...), which the parent's status reports, rather than a failure
// to reach the server or a server too busy to answer (timeouts, 429, 503),
// which is retried without touching the status.
func Answered(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	switch {
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return false
	}
	return true
}
