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

package v1_test

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// runtimeEmptyGVK clears an object's TypeMeta: conversions do not set it.
var runtimeEmptyGVK = schema.GroupVersionKind{}

// hubSpokeHub converts hub to spoke and back, and returns the difference
// from hub, nil when there is none. hub is left untouched.
func hubSpokeHub(hub *examplev1.Drink, spoke conversion.Convertible) error {
	in := hub.DeepCopy()
	if err := spoke.ConvertFrom(in); err != nil {
		return fmt.Errorf("converting to %T: %w", spoke, err)
	}
	out := &examplev1.Drink{}
	if err := spoke.ConvertTo(out); err != nil {
		return fmt.Errorf("converting from %T: %w", spoke, err)
	}
	if !equality.Semantic.DeepEqual(in, hub) {
		return errors.New("the conversion changed its input")
	}
	if !equality.Semantic.DeepEqual(out, hub) {
		return fmt.Errorf("round trip through %T differs (-want +got):\n%s", spoke, diff.Diff(hub, out))
	}
	return nil
}

// spokeHubSpoke converts spoke to the hub and into out, and returns the
// difference from spoke, nil when there is none.
func spokeHubSpoke(spoke, out conversion.Convertible) error {
	in := spoke.DeepCopyObject().(conversion.Convertible)
	hub := &examplev1.Drink{}
	if err := in.ConvertTo(hub); err != nil {
		return fmt.Errorf("converting %T to v1: %w", spoke, err)
	}
	if err := out.ConvertFrom(hub); err != nil {
		return fmt.Errorf("converting v1 to %T: %w", out, err)
	}
	if !equality.Semantic.DeepEqual(in, spoke) {
		return errors.New("the conversion changed its input")
	}
	if !equality.Semantic.DeepEqual(out, spoke) {
		return fmt.Errorf("round trip of %T through v1 differs (-want +got):\n%s", spoke, diff.Diff(spoke, out))
	}
	return nil
}
