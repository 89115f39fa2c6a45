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

package machinery

import (
	"hash/maphash"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
)

// internGeneration is how many strings (or maps) an Interner adds before
// it starts a new generation (generations).
const internGeneration = 1 << 12

// internMaxLen is the longest string an Interner shares. Names, label keys
// and values, reasons and most messages are shorter; a ConfigMap's value
// may be a whole file, and a table holding its old versions would keep
// megabytes alive.
const internMaxLen = 256

// Interner makes equal strings, and equal maps of strings, of the objects
// it is given share one copy: the strings repeated in every cached object
// (label keys and values, an Application's name in its children's labels,
// selectors and owner references, condition types, reasons and messages,
// images) are held once instead of once per object, and so are the label
// maps repeated in an Application and its children (its selector, its Pod
// template's labels, the children's labels and selectors). An object
// decoded from a watch event has its own copy of every string and map; a
// small Go map weighs about 300 bytes whatever it holds.
//
// Sharing is safe because nothing writes to a cached object: the cache
// hands out deep copies, and event handlers only read.
//
// Hand-written because no library does it for Kubernetes objects: the
// standard library's unique package interns strings, but its table holds
// a string only while a unique.Handle is alive, and a cached object keeps
// the string, not the handle, so equal strings decoded after a garbage
// collection would no longer be shared.
type Interner struct {
	mu      sync.Mutex
	strings generations[string, string]
	// maps are keyed by a hash of their sorted entries (mapHash), and
	// compared whole on a hit.
	maps generations[uint64, reflect.Value]
	seed maphash.Seed
}

// generations is an Interner's table. It holds two generations: a key is
// looked up in the current one, then in the previous one (and moved to the
// current one); when the current one is full (internGeneration keys), it
// becomes the previous one and the oldest is dropped. What is seen again
// and again (label keys, images, reasons) thus stays shared for good,
// while what belongs to one object only (a Pod's name, a message naming a
// ReplicaSet) leaves the table after two generations: a table that only
// grew would hold every string of every object ever cached. Objects keep
// the copies they were given.
type generations[K comparable, V any] struct {
	current, previous map[K]V
}

func (g *generations[K, V]) get(key K) (V, bool) {
	if v, ok := g.current[key]; ok {
		return v, true
	}
	v, ok := g.previous[key]
	if ok {
		g.put(key, v)
	}
	return v, ok
}

func (g *generations[K, V]) put(key K, v V) {
	if g.current == nil || len(g.current) >= internGeneration {
		g.previous, g.current = g.current, make(map[K]V, internGeneration)
	}
	g.current[key] = v
}

// NewInterner returns an empty Interner.
func NewInterner() *Interner {
	return &Interner{seed: maphash.MakeSeed()}
}

// Transform returns the cache transform that interns the strings of an
// object after next (another transform, or nil) has run. Anything that is
// not an object (a deletion tombstone) is returned unchanged.
func (in *Interner) Transform(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if next != nil {
			var err error
			if obj, err = next(obj); err != nil {
				return obj, err
			}
		}
		if _, err := meta.Accessor(obj); err != nil {
			return obj, nil //nolint:nilerr // not an object: unchanged
		}
		in.Intern(obj)
		return obj, nil
	}
}

// Intern replaces, in the object obj points to, every string (struct
// fields, list items, the keys and values of maps of strings) by the
// Interner's copy of it. Left alone: strings longer than internMaxLen (and
// maps holding one), byte slices, values behind interfaces, and the fields
// named UID and ResourceVersion, which are unique to each object (or to
// each version of it): interning them would only fill the table.
func (in *Interner) Intern(obj any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.walk(reflect.ValueOf(obj))
}

func (in *Interner) str(s string) string {
	if s == "" || len(s) > internMaxLen {
		return s
	}
	if c, ok := in.strings.get(s); ok {
		return c
	}
	// A copy, so that the table never keeps a decoder's buffer alive.
	c := strings.Clone(s)
	in.strings.put(c, c)
	return c
}

func (in *Interner) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			in.walk(v.Elem())
		}
	case reflect.Struct:
		for _, i := range stringFields(v.Type()) {
			in.walk(v.Field(i))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			in.walk(v.Index(i))
		}
	case reflect.Map:
		in.walkMap(v)
	case reflect.String:
		if v.CanSet() {
			v.SetString(in.str(v.String()))
		}
	default:
	}
}

// walkMap replaces a map of strings (labels, annotations, selectors) by the
// Interner's copy of an equal map, or by one of interned keys and values
// that becomes that copy.
func (in *Interner) walkMap(v reflect.Value) {
	t := v.Type()
	if v.Len() == 0 || !v.CanSet() || t.Key().Kind() != reflect.String || t.Elem().Kind() != reflect.String {
		return
	}
	entries := make([][2]string, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		key, value := it.Key().String(), it.Value().String()
		if len(key) > internMaxLen || len(value) > internMaxLen {
			return // a ConfigMap's data, say: left alone
		}
		entries = append(entries, [2]string{in.str(key), in.str(value)})
	}
	slices.SortFunc(entries, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	hash := in.mapHash(entries)
	if shared, ok := in.maps.get(hash); ok && shared.Type() == t && sameEntries(shared, entries) {
		v.Set(shared)
		return
	}
	m := reflect.MakeMapWithSize(t, len(entries))
	for _, e := range entries {
		m.SetMapIndex(reflect.ValueOf(e[0]).Convert(t.Key()), reflect.ValueOf(e[1]).Convert(t.Elem()))
	}
	in.maps.put(hash, m)
	v.Set(m)
}

// mapHash is the hash of a map's entries, sorted by key.
func (in *Interner) mapHash(entries [][2]string) uint64 {
	var h maphash.Hash
	h.SetSeed(in.seed)
	for _, e := range entries {
		h.WriteString(e[0])
		h.WriteByte(0)
		h.WriteString(e[1])
		h.WriteByte(0)
	}
	return h.Sum64()
}

// sameEntries tells whether the map m holds exactly entries.
func sameEntries(m reflect.Value, entries [][2]string) bool {
	if m.Len() != len(entries) {
		return false
	}
	t := m.Type()
	for _, e := range entries {
		got := m.MapIndex(reflect.ValueOf(e[0]).Convert(t.Key()))
		if !got.IsValid() || got.String() != e[1] {
			return false
		}
	}
	return true
}

// fieldPlans caches, per struct type, stringFields' answer.
var fieldPlans sync.Map // reflect.Type → []int

// stringFields is the indexes of t's fields the walk visits: exported,
// not UID or ResourceVersion, of a kind that may hold a string. Computed
// once per type: a Deployment has about 300 fields in all, most of them
// numbers, booleans or nil pointers.
func stringFields(t reflect.Type) []int {
	if plan, ok := fieldPlans.Load(t); ok {
		return plan.([]int)
	}
	var plan []int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "UID" || f.Name == "ResourceVersion" {
			continue
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Pointer, reflect.Struct, reflect.Slice, reflect.Map:
			plan = append(plan, i)
		default:
		}
	}
	fieldPlans.Store(t, plan)
	return plan
}
