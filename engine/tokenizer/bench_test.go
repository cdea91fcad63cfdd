package tokenizer

import (
	"math/rand"
	"os"
	"strings"
	"testing"

	"proscenium/engine/internal/testutil"
)

// mixedCorpus is about 1 MB of text in English, Chinese, Japanese, Korean,
// Russian, Arabic, with numbers, punctuation, newlines and the golden texts,
// drawn by a fixed-seed generator so that words repeat as in prose (the BPE
// cache sees realistic hits, not one text over and over).
func mixedCorpus(tb testing.TB) string {
	tb.Helper()
	rng := rand.New(rand.NewSource(1))
	words := [][]string{
		strings.Fields("the of and to in is was that for it with as his on be at by had are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three"),
		strings.Fields("我们 今天 天气 很好 世界 你好 中文 混合 数字 时间 问题 工作 生活 朋友 学习 喜欢 知道 觉得 已经 可以 因为 所以 但是 如果 这个 那个 什么 怎么 为什么 现在 明天 昨天 东西 地方 电话 电影 音乐"),
		strings.Fields("こんにちは 世界 カタカナ ひらがな 今日 天気 ありがとう ございます 日本語 勉強 東京 電車 時間 学校 先生 友達 食べる 飲む 行く 来る"),
		strings.Fields("안녕하세요 세계 감사합니다 오늘 날씨 학교 친구 시간 한국어 공부"),
		strings.Fields("Привет мир Ёжик сегодня погода хорошая спасибо время работа жизнь друг говорить знать"),
		strings.Fields("مرحبا بالعالم شكرا اليوم الطقس جميل الوقت العمل الحياة صديق"),
	}
	punct := []string{", ", ". ", "! ", "? ", "; ", " — ", ": ", "\n", "\n\n", " (", ") ", " \"", "\" ", "…", "，", "。", "、", "！"}
	var b strings.Builder
	for _, c := range loadGolden(tb) {
		b.WriteString(c.Text)
		b.WriteByte('\n')
	}
	for b.Len() < 1<<20 {
		lang := rng.Intn(len(words))
		if rng.Intn(3) != 0 {
			lang = 0
		}
		for n := 3 + rng.Intn(12); n > 0; n-- {
			w := words[lang][int(rng.ExpFloat64()*float64(len(words[lang]))/4)%len(words[lang])]
			if rng.Intn(10) == 0 && w[0] < 0x80 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			switch r := rng.Intn(20); {
			case r == 0:
				b.WriteString(punct[rng.Intn(len(punct))])
			case r == 1:
				b.WriteString(" 20")
				b.WriteString(string(rune('0' + rng.Intn(10))))
				b.WriteString(string(rune('0' + rng.Intn(10))))
				b.WriteString(" ")
			case lang == 1 || lang == 2:
				// no spaces between CJK words
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(punct[rng.Intn(len(punct))])
	}
	return b.String()
}

// BenchmarkEncodeMixed measures Encode throughput (MB/s of UTF-8 input) on
// mixedCorpus with the BPE word cache warm from previous iterations. Run with
// -cpu 1 for the one-core figure in docs/PERF.md.
func BenchmarkEncodeMixed(b *testing.B) {
	tok, _ := loadQwen(b)
	text := mixedCorpus(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	cpu := testutil.ProcessCPUSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := tok.Encode(text); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, len(text))
}

// reportCPU adds MB per CPU second and CPU ms per op (see testutil.ProcessCPUSeconds).
func reportCPU(b *testing.B, start float64, bytesPerOp int) {
	if start < 0 {
		return
	}
	used := testutil.ProcessCPUSeconds() - start
	if used <= 0 {
		return
	}
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/used/1e6, "MB/cpu-s")
	b.ReportMetric(used*1e3/float64(b.N), "cpu-ms/op")
}

// BenchmarkEncodeMixedColdCache is BenchmarkEncodeMixed with an empty word
// cache at every iteration: the first-text cost.
func BenchmarkEncodeMixedColdCache(b *testing.B) {
	tok, _ := loadQwen(b)
	text := mixedCorpus(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	var cpu float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tok.bpe.mu.Lock()
		tok.bpe.cache = make(map[string][]int32)
		tok.bpe.mu.Unlock()
		start := testutil.ProcessCPUSeconds()
		b.StartTimer()
		if _, err := tok.Encode(text); err != nil {
			b.Fatal(err)
		}
		cpu += testutil.ProcessCPUSeconds() - start
	}
	if cpu > 0 {
		b.ReportMetric(float64(len(text))*float64(b.N)/cpu/1e6, "MB/cpu-s")
		b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkLoadQwen3 measures Parse of the 11 MB Qwen3 tokenizer.json (file
// already in memory).
func BenchmarkLoadQwen3(b *testing.B) {
	data, err := os.ReadFile(qwenTokenizerPath(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu := testutil.ProcessCPUSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, len(data))
}
