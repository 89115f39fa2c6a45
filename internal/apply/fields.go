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
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// reclaimManager names, for the time of one rewrite, the part of another
// manager's fields that the operator takes over (csaupgrade merges it into
// FieldOwner's apply entry).
const reclaimManager = FieldOwner + "-reclaim"

// inDomain reports whether the field at p is the operator's to restore when
// another manager owns it: anything outside metadata, status and the type
// fields, except a labels or annotations map (the Pod template's) and its
// keys. The map itself is owned by whoever created it (`kubectl rollout
// restart` creates the template's annotations): taking it over would only
// be a write.
func inDomain(p fieldpath.Path) bool {
	if len(p) == 0 || p[0].FieldName == nil {
		return false
	}
	if isTypeMetaOrStatus(*p[0].FieldName) {
		return false
	}
	for i := 0; i+1 < len(p); i++ {
		if isField(p[i], "metadata") && (isField(p[i+1], "labels") || isField(p[i+1], "annotations")) {
			return false
		}
	}
	return true
}

func isField(e fieldpath.PathElement, name string) bool {
	return e.FieldName != nil && *e.FieldName == name
}

// foreignEntry tells whether entry belongs to another manager of the
// object itself (status writers are left out: the status is not the
// operator's).
func foreignEntry(entry metav1.ManagedFieldsEntry) bool {
	return entry.Manager != FieldOwner && entry.Subresource != statusField && entry.FieldsV1 != nil
}

// domainFields returns the fields of entry inside the operator's domain.
func domainFields(entry metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(entry.FieldsV1.GetRawBytes())); err != nil {
		return nil, fmt.Errorf("decoding the fields of manager %q: %w", entry.Manager, err)
	}
	domain := fieldpath.NewSet()
	set.Iterate(func(p fieldpath.Path) {
		if inDomain(p) {
			domain.Insert(p.Copy())
		}
	})
	return domain, nil
}

// ForeignFields names the managers other than the operator that own fields
// inside the operator's domain of obj, with those fields. Empty means no
// one else has changed or added anything there.
func ForeignFields(obj metav1.Object) (map[string]*fieldpath.Set, error) {
	var foreign map[string]*fieldpath.Set
	for _, entry := range obj.GetManagedFields() {
		if !foreignEntry(entry) {
			continue
		}
		domain, err := domainFields(entry)
		if err != nil {
			return nil, err
		}
		if domain.Empty() {
			continue
		}
		if foreign == nil {
			foreign = map[string]*fieldpath.Set{}
		}
		if s, ok := foreign[entry.Manager]; ok {
			domain = domain.Union(s)
		}
		foreign[entry.Manager] = domain
	}
	return foreign, nil
}

// ReclaimPatch returns the JSON patch that moves every field other managers
// own inside the operator's domain of obj into the operator's apply entry,
// guarded by obj's resourceVersion (a newer object makes it fail with a
// Conflict), or nil when there is nothing to move. obj must carry its full
// managedFields, as the API server returns them.
func ReclaimPatch(obj client.Object) ([]byte, error) {
	entries := obj.GetManagedFields()
	split := make([]metav1.ManagedFieldsEntry, 0, len(entries)+1)
	moved := false
	for _, entry := range entries {
		if !foreignEntry(entry) {
			split = append(split, entry)
			continue
		}
		domain, err := domainFields(entry)
		if err != nil {
			return nil, err
		}
		if domain.Empty() {
			split = append(split, entry)
			continue
		}
		moved = true
		all := &fieldpath.Set{}
		if err := all.FromJSON(bytes.NewReader(entry.FieldsV1.GetRawBytes())); err != nil {
			return nil, fmt.Errorf("decoding the fields of manager %q: %w", entry.Manager, err)
		}
		if rest := all.Difference(domain); !rest.Empty() {
			kept := entry.DeepCopy()
			raw, err := rest.ToJSON()
			if err != nil {
				return nil, fmt.Errorf("encoding the fields of manager %q: %w", entry.Manager, err)
			}
			kept.FieldsV1.SetRawBytes(raw)
			split = append(split, *kept)
		}
		taken := metav1.ManagedFieldsEntry{
			Manager:    reclaimManager,
			Operation:  metav1.ManagedFieldsOperationUpdate,
			APIVersion: entry.APIVersion,
			Time:       entry.Time,
			FieldsType: entry.FieldsType,
			FieldsV1:   &metav1.FieldsV1{},
		}
		raw, err := domain.ToJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding the fields taken from manager %q: %w", entry.Manager, err)
		}
		taken.FieldsV1.SetRawBytes(raw)
		split = mergeReclaimed(split, taken)
	}
	if !moved {
		return nil, nil
	}
	rewritten := obj.DeepCopyObject()
	accessor, err := meta.Accessor(rewritten)
	if err != nil {
		return nil, err
	}
	accessor.SetManagedFields(split)
	if err := csaupgrade.UpgradeManagedFields(rewritten, sets.New(reclaimManager), FieldOwner); err != nil {
		return nil, fmt.Errorf("merging the reclaimed fields into %s's: %w", FieldOwner, err)
	}
	return json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": accessor.GetManagedFields()},
		// As csaupgrade's own patch: a replaced resourceVersion makes the
		// API server refuse the patch with a Conflict if obj changed.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
}

// mergeReclaimed adds taken to entries, united with an earlier reclaimed
// entry of the same API version (csaupgrade takes one entry per version).
func mergeReclaimed(entries []metav1.ManagedFieldsEntry, taken metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	for i, e := range entries {
		if e.Manager != reclaimManager || e.APIVersion != taken.APIVersion {
			continue
		}
		a, b := &fieldpath.Set{}, &fieldpath.Set{}
		if a.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())) != nil || b.FromJSON(bytes.NewReader(taken.FieldsV1.GetRawBytes())) != nil {
			break
		}
		if raw, err := a.Union(b).ToJSON(); err == nil {
			entries[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
			return entries
		}
	}
	return append(entries, taken)
}

// ManagedFieldsTransform is the cache transform of every object the
// operator caches without a transform of its own: managedFields are
// dropped (they weigh about as much as the object), except, on the
// operator's own children (ManagedByLabel), the entries of other managers
// that own fields inside the operator's domain. At steady state a child
// has none, so its cached copy is as small as before; a child someone
// changed keeps what tells the drift check so.
func ManagedFieldsTransform() toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil {
			return in, nil //nolint:nilerr // not an object (e.g. a tombstone): unchanged
		}
		entries := obj.GetManagedFields()
		if len(entries) == 0 {
			return in, nil
		}
		var kept []metav1.ManagedFieldsEntry
		if obj.GetLabels()[ManagedByLabel] == ManagedByValue {
			for _, entry := range entries {
				if !foreignEntry(entry) {
					continue
				}
				if domain, err := domainFields(entry); err != nil || !domain.Empty() {
					// Undecodable: kept, the drift check reports it.
					kept = append(kept, entry)
				}
			}
		}
		obj.SetManagedFields(kept)
		return in, nil
	}
}

// statusField names the status (the field and the subresource).
const statusField = "status"

// isTypeMetaOrStatus tells whether a top-level field is one the operator
// never compares or restores: the type, the metadata (key by key only) and
// the status.
func isTypeMetaOrStatus(field string) bool {
	switch field {
	case "metadata", statusField, "apiVersion", "kind":
		return true
	}
	return false
}
