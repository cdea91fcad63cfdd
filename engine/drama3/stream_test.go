package drama3

import (
	"reflect"
	"testing"
)

func TestChunkerBoundaries(t *testing.T) {
	cases := []struct {
		policy ChunkPolicy
		made   int
		want   [][2]int
	}{
		{DefaultChunkPolicy(), 0, nil},
		{DefaultChunkPolicy(), 1, [][2]int{{0, 1}}},
		{DefaultChunkPolicy(), 2, [][2]int{{0, 1}, {1, 2}}},
		{DefaultChunkPolicy(), 3, [][2]int{{0, 1}, {1, 3}}},
		{DefaultChunkPolicy(), 40, [][2]int{{0, 1}, {1, 3}, {3, 7}, {7, 15}, {15, 31}, {31, 40}}},
		{DefaultChunkPolicy(), 100, [][2]int{{0, 1}, {1, 3}, {3, 7}, {7, 15}, {15, 31}, {31, 63}, {63, 95}, {95, 100}}},
		{ChunkPolicy{First: 2, Growth: 3, Max: 10}, 30, [][2]int{{0, 2}, {2, 8}, {8, 18}, {18, 28}, {28, 30}}},
		{ChunkPolicy{First: 4, Growth: 1, Max: 4}, 9, [][2]int{{0, 4}, {4, 8}, {8, 9}}},
	}
	for _, c := range cases {
		ch, err := NewChunker(c.policy)
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]int
		for made := 1; made <= c.made; made++ {
			if from, to, ok := ch.Next(made); ok {
				got = append(got, [2]int{from, to})
			}
		}
		if from, to, ok := ch.Rest(c.made); ok {
			got = append(got, [2]int{from, to})
		}
		if _, _, ok := ch.Rest(c.made); ok {
			t.Errorf("%+v made %d: Rest reported twice", c.policy, c.made)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v made %d: chunks %v, want %v", c.policy, c.made, got, c.want)
		}
	}
}

func TestChunkPolicyValidate(t *testing.T) {
	for _, p := range []ChunkPolicy{{0, 2, 4}, {1, 0, 4}, {4, 2, 2}} {
		if _, err := NewChunker(p); err == nil {
			t.Errorf("policy %+v accepted", p)
		}
	}
}
