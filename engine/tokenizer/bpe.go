package tokenizer

import "sync"

// bpeModel applies byte-level BPE merges to one pre-token.
type bpeModel struct {
	merges map[uint64]mergeResult // key: left id << 32 | right id
	byteID [256]int32             // id of each single-byte symbol
	// wholeWord holds the vocabulary by byte-level spelling when the model has
	// ignore_merges (a word found there is one token, merges or not).
	wholeWord map[string]int

	mu    sync.RWMutex
	cache map[string][]int32 // word → ids, for words shorter than cacheWordMax
}

type mergeResult struct {
	rank int32 // position in model.merges: lower merges first
	id   int32 // id of the merged symbol
}

const (
	cacheEntriesMax = 1 << 16
	cacheWordMax    = 256 // bytes; HF caches words below the same length
)

func mergeKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

// appendWord appends the ids of one pre-token (raw bytes, not yet in the
// byte-level alphabet).
func (m *bpeModel) appendWord(dst []int, word string) []int {
	cacheable := len(word) < cacheWordMax
	if cacheable {
		m.mu.RLock()
		ids, ok := m.cache[word]
		m.mu.RUnlock()
		if ok {
			for _, id := range ids {
				dst = append(dst, int(id))
			}
			return dst
		}
	}
	var ids []int32
	if m.wholeWord != nil {
		if id, ok := m.wholeWord[byteLevelString(word)]; ok {
			ids = []int32{int32(id)}
		}
	}
	if ids == nil {
		ids = m.merge(word)
	}
	if cacheable {
		m.mu.Lock()
		if len(m.cache) < cacheEntriesMax {
			m.cache[word] = ids
		}
		m.mu.Unlock()
	}
	for _, id := range ids {
		dst = append(dst, int(id))
	}
	return dst
}

// symbol is one node of the word's doubly linked symbol list.
type symbol struct {
	id         int32
	prev, next int32 // -1 at the ends
	gone       bool  // merged into its left neighbour
}

// candidate is a possible merge of the symbol at pos with its right neighbour.
type candidate struct {
	rank, pos, id int32
}

// merge runs HF's BPE merge loop (tokenizers' Word::merge_all without
// dropout): repeatedly apply the pending merge of lowest rank, the leftmost
// among equal ranks, skipping candidates made stale by earlier merges.
func (m *bpeModel) merge(word string) []int32 {
	n := len(word)
	syms := make([]symbol, n)
	for i := 0; i < n; i++ {
		syms[i] = symbol{id: m.byteID[word[i]], prev: int32(i - 1), next: int32(i + 1)}
	}
	if n > 0 {
		syms[n-1].next = -1
	}
	h := candidateHeap(make([]candidate, 0, n))
	for i := 0; i+1 < n; i++ {
		if r, ok := m.merges[mergeKey(syms[i].id, syms[i+1].id)]; ok {
			h.push(candidate{rank: r.rank, pos: int32(i), id: r.id})
		}
	}
	for len(h) > 0 {
		top := h.pop()
		left := &syms[top.pos]
		if left.gone || left.next < 0 {
			continue
		}
		rightPos := left.next
		right := &syms[rightPos]
		if r, ok := m.merges[mergeKey(left.id, right.id)]; !ok || r.id != top.id {
			continue
		}
		left.id = top.id
		left.next = right.next
		right.gone = true
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if left.prev >= 0 {
			if r, ok := m.merges[mergeKey(syms[left.prev].id, left.id)]; ok {
				h.push(candidate{rank: r.rank, pos: left.prev, id: r.id})
			}
		}
		if left.next >= 0 {
			if r, ok := m.merges[mergeKey(left.id, syms[left.next].id)]; ok {
				h.push(candidate{rank: r.rank, pos: top.pos, id: r.id})
			}
		}
	}
	out := make([]int32, 0, n)
	for i := int32(0); n > 0 && i >= 0; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

// candidateHeap is a binary min-heap ordered by (rank, pos).
type candidateHeap []candidate

func (c candidate) before(o candidate) bool {
	return c.rank < o.rank || (c.rank == o.rank && c.pos < o.pos)
}

func (h *candidateHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *candidateHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, min := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].before(s[min]) {
			min = l
		}
		if r < len(s) && s[r].before(s[min]) {
			min = r
		}
		if min == i {
			break
		}
		s[i], s[min] = s[min], s[i]
		i = min
	}
	*h = s
	return top
}
