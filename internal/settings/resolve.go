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

package settings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// Resolve returns the settings spec asks for, as far as they can be
// applied, and the fields it refuses with the reason. A field spec leaves
// unset takes its value from defaults (the flags and built-ins); a refused
// field keeps its value from lastGood (the settings in effect). The API
// server has already checked every value on its own (CEL); Resolve checks
// what needs the cluster or several fields: namespaceExists tells whether a
// namespace exists.
func Resolve(spec *configv1alpha1.OperatorConfigurationSpec, defaults, lastGood *Settings,
	namespaceExists func(string) (bool, error)) (Settings, []configv1alpha1.RefusedField, error) {
	s := *defaults
	var refused []configv1alpha1.RefusedField
	refuse := func(field, format string, args ...any) {
		refused = append(refused, configv1alpha1.RefusedField{Field: field, Message: fmt.Sprintf(format, args...)})
	}

	if spec.GuestbookImage != "" {
		s.GuestbookImage = spec.GuestbookImage
	}
	if spec.ChildAccess != "" {
		s.ChildAccess = spec.ChildAccess
	}
	if len(spec.GuestbookSystemNamespaces) > 0 {
		// Sorted, so that a reordered list is no change.
		s.GuestbookSystemNamespaces = slices.Sorted(slices.Values(spec.GuestbookSystemNamespaces))
	}
	if spec.LogLevel != "" {
		if _, err := ParseLevel(string(spec.LogLevel)); err != nil {
			refuse("spec.logLevel", "%v", err)
			s.LogLevel = lastGood.LogLevel
		} else {
			s.LogLevel = string(spec.LogLevel)
		}
	}
	if spec.ConflictRecheckInterval != "" {
		d, err := time.ParseDuration(spec.ConflictRecheckInterval)
		switch {
		case err != nil:
			refuse("spec.conflictRecheckInterval", "%v", err)
			s.ConflictRecheckInterval = lastGood.ConflictRecheckInterval
		case d < time.Second || d > time.Hour:
			refuse("spec.conflictRecheckInterval", "%s is not between 1s and 1h", d)
			s.ConflictRecheckInterval = lastGood.ConflictRecheckInterval
		default:
			s.ConflictRecheckInterval = d
		}
	}
	if r := spec.GuestbookResources; r != nil {
		if msg := limitsBelowRequests(r); msg != "" {
			refuse("spec.guestbookResources", "%s", msg)
			s.GuestbookResources = lastGood.GuestbookResources
		} else {
			s.GuestbookResources = corev1.ResourceRequirements{Requests: r.Requests, Limits: r.Limits}
		}
	}
	if c := spec.Controllers; c != nil {
		s.Controllers = Controllers{
			Application:      enabled(c.Application),
			MyCustomResource: enabled(c.MyCustomResource),
			Guestbook:        enabled(c.Guestbook),
			Drink:            enabled(c.Drink),
		}
	}
	if len(spec.WatchNamespaces) > 0 {
		var missing []string
		for _, ns := range spec.WatchNamespaces {
			exists, err := namespaceExists(ns)
			if err != nil {
				return Settings{}, nil, fmt.Errorf("looking up namespace %s: %w", ns, err)
			}
			if !exists {
				missing = append(missing, ns)
			}
		}
		if len(missing) > 0 {
			refuse("spec.watchNamespaces", "namespaces %s do not exist; create them or remove them from the list",
				strings.Join(missing, ", "))
			s.WatchNamespaces = lastGood.WatchNamespaces
		} else {
			s.WatchNamespaces = slices.Clone(spec.WatchNamespaces)
			slices.Sort(s.WatchNamespaces)
		}
	}
	return s, refused, nil
}

func enabled(b *bool) bool { return b == nil || *b }

// limitsBelowRequests says which limits of r are below their requests, or
// returns "" when none is.
func limitsBelowRequests(r *configv1alpha1.GuestbookResources) string {
	var below []string
	for name, limit := range r.Limits {
		if request, ok := r.Requests[name]; ok && limit.Cmp(request) < 0 {
			below = append(below, fmt.Sprintf("%s limit %s is below its request %s", name, limit.String(), request.String()))
		}
	}
	slices.Sort(below)
	return strings.Join(below, "; ")
}

// Spec spells s as an OperatorConfigurationSpec, every field set: the
// status's record of what is in effect.
func (s *Settings) Spec() configv1alpha1.OperatorConfigurationSpec {
	spec := configv1alpha1.OperatorConfigurationSpec{
		GuestbookImage:          s.GuestbookImage,
		ConflictRecheckInterval: s.ConflictRecheckInterval.String(),
		LogLevel:                configv1alpha1.LogLevel(s.LogLevel),
		ChildAccess:             s.ChildAccess,
		Controllers: &configv1alpha1.ControllersSpec{
			Application:      new(s.Controllers.Application),
			MyCustomResource: new(s.Controllers.MyCustomResource),
			Guestbook:        new(s.Controllers.Guestbook),
			Drink:            new(s.Controllers.Drink),
		},
		WatchNamespaces:           slices.Clone(s.WatchNamespaces),
		GuestbookSystemNamespaces: slices.Clone(s.GuestbookSystemNamespaces),
	}
	if len(s.GuestbookResources.Requests) > 0 || len(s.GuestbookResources.Limits) > 0 {
		spec.GuestbookResources = &configv1alpha1.GuestbookResources{
			Requests: s.GuestbookResources.Requests.DeepCopy(),
			Limits:   s.GuestbookResources.Limits.DeepCopy(),
		}
	}
	return spec
}
