package engine

import "sync"

// IxSeen remembers the index keys of row versions an indexed store read whole or wrote, so
// that a write conditional on one of those versions (a Strict update of an entity read by
// One, the outcome verbs) knows which index rows it replaces without reading the row first.
// A version's index keys never change, so an entry is never wrong: at worst the row moved
// on, and the conditional write fails as it would have anyway. It holds at most
// maxIxSeen rows; beyond that an arbitrary entry makes room.
type IxSeen struct {
	mu sync.Mutex
	m  map[[2]string]ixVersion
}

type ixVersion struct {
	etag string
	keys []string
}

const maxIxSeen = 4096

// Remember records the index keys of the row pk, rk at version etag.
func (s *IxSeen) Remember(pk, rk, etag string, keys []string) {
	if s == nil || etag == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[[2]string]ixVersion{}
	}
	k := [2]string{pk, rk}
	if _, ok := s.m[k]; !ok && len(s.m) >= maxIxSeen {
		for old := range s.m {
			delete(s.m, old)
			break
		}
	}
	s.m[k] = ixVersion{etag: etag, keys: keys}
}

// Known returns the index keys of the row pk, rk at version etag, if remembered.
func (s *IxSeen) Known(pk, rk, etag string) ([]string, bool) {
	if s == nil || etag == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[[2]string{pk, rk}]
	if !ok || v.etag != etag {
		return nil, false
	}
	return v.keys, true
}
