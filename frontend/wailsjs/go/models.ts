export namespace api {
	
	export class ExpertCache {
	    slot_experts: number;
	    resident_experts: number;
	    total_experts: number;
	    hits: number;
	    misses: number;
	    hit_share: number;
	    promoted_experts: number;
	    evictions: number;
	    frames: number;
	    bus_bytes_per_frame: number;
	
	    static createFrom(source: any = {}) {
	        return new ExpertCache(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.slot_experts = source["slot_experts"];
	        this.resident_experts = source["resident_experts"];
	        this.total_experts = source["total_experts"];
	        this.hits = source["hits"];
	        this.misses = source["misses"];
	        this.hit_share = source["hit_share"];
	        this.promoted_experts = source["promoted_experts"];
	        this.evictions = source["evictions"];
	        this.frames = source["frames"];
	        this.bus_bytes_per_frame = source["bus_bytes_per_frame"];
	    }
	}
	export class ExpertTier {
	    tier: string;
	    device_bytes: number;
	    host_bytes: number;
	    device_layers: number;
	    layers: number;
	    hit_share: number;
	    bus_bytes_per_frame: number;
	    cache?: ExpertCache;
	
	    static createFrom(source: any = {}) {
	        return new ExpertTier(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.tier = source["tier"];
	        this.device_bytes = source["device_bytes"];
	        this.host_bytes = source["host_bytes"];
	        this.device_layers = source["device_layers"];
	        this.layers = source["layers"];
	        this.hit_share = source["hit_share"];
	        this.bus_bytes_per_frame = source["bus_bytes_per_frame"];
	        this.cache = this.convertValues(source["cache"], ExpertCache);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Finish {
	    reason: string;
	    frames: number;
	    audio_s: number;
	    time_to_first_audio_ms: number;
	    elapsed_s: number;
	    real_time_factor: number;
	    stages_s: Record<string, number>;
	    batch?: number;
	    prompt_rows?: number;
	    prefill_rows?: number;
	    voice_cached?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Finish(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.reason = source["reason"];
	        this.frames = source["frames"];
	        this.audio_s = source["audio_s"];
	        this.time_to_first_audio_ms = source["time_to_first_audio_ms"];
	        this.elapsed_s = source["elapsed_s"];
	        this.real_time_factor = source["real_time_factor"];
	        this.stages_s = source["stages_s"];
	        this.batch = source["batch"];
	        this.prompt_rows = source["prompt_rows"];
	        this.prefill_rows = source["prefill_rows"];
	        this.voice_cached = source["voice_cached"];
	    }
	}
	export class Info {
	    model: string;
	    backend: string;
	    backend_reason?: string;
	    demo: boolean;
	    sample_rate_hz: number;
	    samples_per_frame: number;
	    codebooks: number;
	    codebook_sizes?: number[];
	    parameters: number;
	    batch?: number;
	
	    static createFrom(source: any = {}) {
	        return new Info(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.model = source["model"];
	        this.backend = source["backend"];
	        this.backend_reason = source["backend_reason"];
	        this.demo = source["demo"];
	        this.sample_rate_hz = source["sample_rate_hz"];
	        this.samples_per_frame = source["samples_per_frame"];
	        this.codebooks = source["codebooks"];
	        this.codebook_sizes = source["codebook_sizes"];
	        this.parameters = source["parameters"];
	        this.batch = source["batch"];
	    }
	}
	export class Memory {
	    device: string;
	    used_bytes: number;
	    peak_bytes: number;
	    cap_bytes: number;
	    total_bytes?: number;
	    pinned_bytes?: number;
	    voice_cache_bytes?: number;
	    voice_cache_cap_bytes?: number;
	    voice_entries?: number;
	    voice_cache_in_host?: boolean;
	    voice_keys?: string[];
	    experts?: ExpertTier;
	
	    static createFrom(source: any = {}) {
	        return new Memory(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.device = source["device"];
	        this.used_bytes = source["used_bytes"];
	        this.peak_bytes = source["peak_bytes"];
	        this.cap_bytes = source["cap_bytes"];
	        this.total_bytes = source["total_bytes"];
	        this.pinned_bytes = source["pinned_bytes"];
	        this.voice_cache_bytes = source["voice_cache_bytes"];
	        this.voice_cache_cap_bytes = source["voice_cache_cap_bytes"];
	        this.voice_entries = source["voice_entries"];
	        this.voice_cache_in_host = source["voice_cache_in_host"];
	        this.voice_keys = source["voice_keys"];
	        this.experts = this.convertValues(source["experts"], ExpertTier);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Reference {
	    transcript: string;
	    codes: number[][];
	
	    static createFrom(source: any = {}) {
	        return new Reference(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.transcript = source["transcript"];
	        this.codes = source["codes"];
	    }
	}
	export class SpeechRequest {
	    text: string;
	    sampling: sampling.Settings;
	    seed: number;
	    max_frames: number;
	    references?: Reference[];
	
	    static createFrom(source: any = {}) {
	        return new SpeechRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.text = source["text"];
	        this.sampling = this.convertValues(source["sampling"], sampling.Settings);
	        this.seed = source["seed"];
	        this.max_frames = source["max_frames"];
	        this.references = this.convertValues(source["references"], Reference);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace app {
	
	export class PlayRequest {
	    id: number;
	    at_s: number;
	
	    static createFrom(source: any = {}) {
	        return new PlayRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.at_s = source["at_s"];
	    }
	}
	export class ProjectRename {
	    from: string;
	    to: string;
	
	    static createFrom(source: any = {}) {
	        return new ProjectRename(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.from = source["from"];
	        this.to = source["to"];
	    }
	}
	export class SceneExportRequest {
	    project: string;
	    path: string;
	    overwrite: boolean;
	
	    static createFrom(source: any = {}) {
	        return new SceneExportRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.project = source["project"];
	        this.path = source["path"];
	        this.overwrite = source["overwrite"];
	    }
	}
	export class SceneExportResult {
	    files: string[];
	    plan: loudness.Plan;
	    duration_s: number;
	    line_files?: scene.LineFile[];
	    note?: string;
	
	    static createFrom(source: any = {}) {
	        return new SceneExportResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.files = source["files"];
	        this.plan = this.convertValues(source["plan"], loudness.Plan);
	        this.duration_s = source["duration_s"];
	        this.line_files = this.convertValues(source["line_files"], scene.LineFile);
	        this.note = source["note"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ScreenplayExport {
	    project: string;
	    path: string;
	
	    static createFrom(source: any = {}) {
	        return new ScreenplayExport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.project = source["project"];
	        this.path = source["path"];
	    }
	}
	export class ScreenplayFile {
	    name: string;
	    text: string;
	
	    static createFrom(source: any = {}) {
	        return new ScreenplayFile(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.text = source["text"];
	    }
	}
	export class ScreenplayPreview {
	    screenplay: script.Screenplay;
	    cast: string[];
	
	    static createFrom(source: any = {}) {
	        return new ScreenplayPreview(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.screenplay = this.convertValues(source["screenplay"], script.Screenplay);
	        this.cast = source["cast"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ScreenplayProject {
	    name: string;
	    text: string;
	    narrate: boolean;
	    cast: string[];
	
	    static createFrom(source: any = {}) {
	        return new ScreenplayProject(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.text = source["text"];
	        this.narrate = source["narrate"];
	        this.cast = source["cast"];
	    }
	}
	export class ScreenplayRequest {
	    text: string;
	    narrate: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ScreenplayRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.text = source["text"];
	        this.narrate = source["narrate"];
	    }
	}
	export class StudioStatus {
	    audio: playback.AudioStatus;
	    dialogs: boolean;
	    takes_dir: string;
	    takes_bytes: number;
	    takes_limit_bytes: number;
	    export_dir: string;
	    demo_dir: string;
	    gpu: string;
	    warnings: string[];
	
	    static createFrom(source: any = {}) {
	        return new StudioStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.audio = this.convertValues(source["audio"], playback.AudioStatus);
	        this.dialogs = source["dialogs"];
	        this.takes_dir = source["takes_dir"];
	        this.takes_bytes = source["takes_bytes"];
	        this.takes_limit_bytes = source["takes_limit_bytes"];
	        this.export_dir = source["export_dir"];
	        this.demo_dir = source["demo_dir"];
	        this.gpu = source["gpu"];
	        this.warnings = source["warnings"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TrashedProject {
	    name: string;
	    path: string;
	
	    static createFrom(source: any = {}) {
	        return new TrashedProject(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.path = source["path"];
	    }
	}

}

export namespace lexicon {
	
	export class Entry {
	    written: string;
	    spoken: string;
	
	    static createFrom(source: any = {}) {
	        return new Entry(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.written = source["written"];
	        this.spoken = source["spoken"];
	    }
	}

}

export namespace loudness {
	
	export class Plan {
	    measured_lufs: number;
	    true_peak_dbtp: number;
	    target_lufs: number;
	    ceiling_dbtp: number;
	    gain_db: number;
	    result_lufs: number;
	    result_peak_dbtp: number;
	    limited: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Plan(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.measured_lufs = source["measured_lufs"];
	        this.true_peak_dbtp = source["true_peak_dbtp"];
	        this.target_lufs = source["target_lufs"];
	        this.ceiling_dbtp = source["ceiling_dbtp"];
	        this.gain_db = source["gain_db"];
	        this.result_lufs = source["result_lufs"];
	        this.result_peak_dbtp = source["result_peak_dbtp"];
	        this.limited = source["limited"];
	    }
	}

}

export namespace model {
	
	export class LoadProgress {
	    dir: string;
	    read_bytes: number;
	    total_bytes: number;
	    done: boolean;
	
	    static createFrom(source: any = {}) {
	        return new LoadProgress(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.dir = source["dir"];
	        this.read_bytes = source["read_bytes"];
	        this.total_bytes = source["total_bytes"];
	        this.done = source["done"];
	    }
	}
	export class ModelCandidate {
	    dir: string;
	    source: string;
	    label: string;
	
	    static createFrom(source: any = {}) {
	        return new ModelCandidate(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.dir = source["dir"];
	        this.source = source["source"];
	        this.label = source["label"];
	    }
	}
	export class ModelStatus {
	    state: string;
	    dir: string;
	    info?: api.Info;
	    message: string;
	    error: string;
	    can_load: boolean;
	    pending: string;
	
	    static createFrom(source: any = {}) {
	        return new ModelStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.state = source["state"];
	        this.dir = source["dir"];
	        this.info = this.convertValues(source["info"], api.Info);
	        this.message = source["message"];
	        this.error = source["error"];
	        this.can_load = source["can_load"];
	        this.pending = source["pending"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ModelSummary {
	    dir: string;
	    demo: boolean;
	    layers: number;
	    hidden: number;
	    experts: number;
	    codebooks: number;
	    parameters: number;
	    stored_bytes: number;
	    file_bytes: number;
	    memory_needed_bytes: number;
	    memory_basis: string;
	    context_rows: number;
	    gpu_bytes: number;
	    gpu_note: string;
	    problems: string[];
	    error: string;
	
	    static createFrom(source: any = {}) {
	        return new ModelSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.dir = source["dir"];
	        this.demo = source["demo"];
	        this.layers = source["layers"];
	        this.hidden = source["hidden"];
	        this.experts = source["experts"];
	        this.codebooks = source["codebooks"];
	        this.parameters = source["parameters"];
	        this.stored_bytes = source["stored_bytes"];
	        this.file_bytes = source["file_bytes"];
	        this.memory_needed_bytes = source["memory_needed_bytes"];
	        this.memory_basis = source["memory_basis"];
	        this.context_rows = source["context_rows"];
	        this.gpu_bytes = source["gpu_bytes"];
	        this.gpu_note = source["gpu_note"];
	        this.problems = source["problems"];
	        this.error = source["error"];
	    }
	}
	export class ScriptProblem {
	    start: number;
	    end: number;
	    token: string;
	    reason: string;
	
	    static createFrom(source: any = {}) {
	        return new ScriptProblem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.start = source["start"];
	        this.end = source["end"];
	        this.token = source["token"];
	        this.reason = source["reason"];
	    }
	}
	export class ScriptCheck {
	    chars: number;
	    bytes: number;
	    max_bytes: number;
	    tokenizer: boolean;
	    problems: ScriptProblem[];
	
	    static createFrom(source: any = {}) {
	        return new ScriptCheck(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.chars = source["chars"];
	        this.bytes = source["bytes"];
	        this.max_bytes = source["max_bytes"];
	        this.tokenizer = source["tokenizer"];
	        this.problems = this.convertValues(source["problems"], ScriptProblem);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class StatsView {
	    loaded: boolean;
	    message: string;
	    memory?: api.Memory;
	    last_take?: api.Finish;
	    total_bytes: number;
	    voices_ready?: string[];
	    cast_ready?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new StatsView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.loaded = source["loaded"];
	        this.message = source["message"];
	        this.memory = this.convertValues(source["memory"], api.Memory);
	        this.last_take = this.convertValues(source["last_take"], api.Finish);
	        this.total_bytes = source["total_bytes"];
	        this.voices_ready = source["voices_ready"];
	        this.cast_ready = source["cast_ready"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TokenCount {
	    tokens: number;
	    model: string;
	
	    static createFrom(source: any = {}) {
	        return new TokenCount(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.tokens = source["tokens"];
	        this.model = source["model"];
	    }
	}

}

export namespace playback {
	
	export class AudioStatus {
	    state: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new AudioStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.state = source["state"];
	        this.message = source["message"];
	    }
	}
	export class PlaybackStatus {
	    state: string;
	    take_id: number;
	    live: boolean;
	    position_s: number;
	    volume: number;
	    underruns: number;
	    silence_s: number;
	    output: AudioStatus;
	    scene_preview_id: number;
	
	    static createFrom(source: any = {}) {
	        return new PlaybackStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.state = source["state"];
	        this.take_id = source["take_id"];
	        this.live = source["live"];
	        this.position_s = source["position_s"];
	        this.volume = source["volume"];
	        this.underruns = source["underruns"];
	        this.silence_s = source["silence_s"];
	        this.output = this.convertValues(source["output"], AudioStatus);
	        this.scene_preview_id = source["scene_preview_id"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace projects {
	
	export class ExportSettings {
	    gap_s: number;
	    target_lufs: number;
	    format: string;
	    per_line: boolean;
	    captions: string;
	    trim_silence: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ExportSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gap_s = source["gap_s"];
	        this.target_lufs = source["target_lufs"];
	        this.format = source["format"];
	        this.per_line = source["per_line"];
	        this.captions = source["captions"];
	        this.trim_silence = source["trim_silence"];
	    }
	}
	export class Line {
	    text: string;
	    speaker: number;
	    takes: number[];
	    chosen: number;
	    pause_after_s?: number;
	    gain_db?: number;
	    file_name?: string;
	
	    static createFrom(source: any = {}) {
	        return new Line(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.text = source["text"];
	        this.speaker = source["speaker"];
	        this.takes = source["takes"];
	        this.chosen = source["chosen"];
	        this.pause_after_s = source["pause_after_s"];
	        this.gain_db = source["gain_db"];
	        this.file_name = source["file_name"];
	    }
	}
	export class Project {
	    format: number;
	    name: string;
	    script: string;
	    cast: string[];
	    characters?: string[];
	    sampling: sampling.Settings;
	    seed: number;
	    max_frames: number;
	    lines: Line[];
	    takes: number[];
	    export: ExportSettings;
	    saved_ms: number;
	
	    static createFrom(source: any = {}) {
	        return new Project(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.format = source["format"];
	        this.name = source["name"];
	        this.script = source["script"];
	        this.cast = source["cast"];
	        this.characters = source["characters"];
	        this.sampling = this.convertValues(source["sampling"], sampling.Settings);
	        this.seed = source["seed"];
	        this.max_frames = source["max_frames"];
	        this.lines = this.convertValues(source["lines"], Line);
	        this.takes = source["takes"];
	        this.export = this.convertValues(source["export"], ExportSettings);
	        this.saved_ms = source["saved_ms"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Saved {
	    project: Project;
	    kept_aside?: string;
	
	    static createFrom(source: any = {}) {
	        return new Saved(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.project = this.convertValues(source["project"], Project);
	        this.kept_aside = source["kept_aside"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Summary {
	    name: string;
	    saved_ms: number;
	    lines: number;
	    takes: number;
	    problem?: string;
	
	    static createFrom(source: any = {}) {
	        return new Summary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.saved_ms = source["saved_ms"];
	        this.lines = source["lines"];
	        this.takes = source["takes"];
	        this.problem = source["problem"];
	    }
	}

}

export namespace sampling {
	
	export class Settings {
	    temperature: number;
	    top_p: number;
	    top_k: number;
	
	    static createFrom(source: any = {}) {
	        return new Settings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.temperature = source["temperature"];
	        this.top_p = source["top_p"];
	        this.top_k = source["top_k"];
	    }
	}

}

export namespace scene {
	
	export class LineFile {
	    line: number;
	    take: number;
	    lowered_db: number;
	    true_peak_dbtp: number;
	
	    static createFrom(source: any = {}) {
	        return new LineFile(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.line = source["line"];
	        this.take = source["take"];
	        this.lowered_db = source["lowered_db"];
	        this.true_peak_dbtp = source["true_peak_dbtp"];
	    }
	}
	export class Skipped {
	    line: number;
	    why: string;
	
	    static createFrom(source: any = {}) {
	        return new Skipped(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.line = source["line"];
	        this.why = source["why"];
	    }
	}
	export class PreviewLine {
	    line: number;
	    take: number;
	    start_s: number;
	    end_s: number;
	    loudness_lufs?: number;
	
	    static createFrom(source: any = {}) {
	        return new PreviewLine(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.line = source["line"];
	        this.take = source["take"];
	        this.start_s = source["start_s"];
	        this.end_s = source["end_s"];
	        this.loudness_lufs = source["loudness_lufs"];
	    }
	}
	export class Preview {
	    id: number;
	    project: string;
	    lines: PreviewLine[];
	    skipped: Skipped[];
	    note: string;
	    duration_s: number;
	    rate_hz: number;
	    plan: loudness.Plan;
	    peaks: takes.Peaks;
	
	    static createFrom(source: any = {}) {
	        return new Preview(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.project = source["project"];
	        this.lines = this.convertValues(source["lines"], PreviewLine);
	        this.skipped = this.convertValues(source["skipped"], Skipped);
	        this.note = source["note"];
	        this.duration_s = source["duration_s"];
	        this.rate_hz = source["rate_hz"];
	        this.plan = this.convertValues(source["plan"], loudness.Plan);
	        this.peaks = this.convertValues(source["peaks"], takes.Peaks);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	

}

export namespace script {
	
	export class Character {
	    name: string;
	    lines: number;
	
	    static createFrom(source: any = {}) {
	        return new Character(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.lines = source["lines"];
	    }
	}
	export class LeftOut {
	    what: string;
	    count: number;
	
	    static createFrom(source: any = {}) {
	        return new LeftOut(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.what = source["what"];
	        this.count = source["count"];
	    }
	}
	export class Screenplay {
	    script: string;
	    characters: Character[];
	    lines: number;
	    left_out: LeftOut[];
	
	    static createFrom(source: any = {}) {
	        return new Screenplay(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.script = source["script"];
	        this.characters = this.convertValues(source["characters"], Character);
	        this.lines = source["lines"];
	        this.left_out = this.convertValues(source["left_out"], LeftOut);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace server {
	
	export class RequestRecord {
	    at_ms: number;
	    method: string;
	    path: string;
	    status: number;
	    bytes: number;
	    duration_ms: number;
	    client: string;
	    streamed: boolean;
	    batch?: number;
	
	    static createFrom(source: any = {}) {
	        return new RequestRecord(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.at_ms = source["at_ms"];
	        this.method = source["method"];
	        this.path = source["path"];
	        this.status = source["status"];
	        this.bytes = source["bytes"];
	        this.duration_ms = source["duration_ms"];
	        this.client = source["client"];
	        this.streamed = source["streamed"];
	        this.batch = source["batch"];
	    }
	}
	export class ServerStatus {
	    running: boolean;
	    address: string;
	    control: boolean;
	    port: number;
	    model: string;
	    error: string;
	    log: RequestRecord[];
	
	    static createFrom(source: any = {}) {
	        return new ServerStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.running = source["running"];
	        this.address = source["address"];
	        this.control = source["control"];
	        this.port = source["port"];
	        this.model = source["model"];
	        this.error = source["error"];
	        this.log = this.convertValues(source["log"], RequestRecord);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace settings {
	
	export class Preset {
	    name: string;
	    sampling: sampling.Settings;
	
	    static createFrom(source: any = {}) {
	        return new Preset(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.sampling = this.convertValues(source["sampling"], sampling.Settings);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Settings {
	    script: string;
	    sampling: sampling.Settings;
	    seed: number;
	    max_frames: number;
	    model_dir: string;
	    presets: Preset[];
	    memory_cap_bytes: number;
	    output_device: string;
	    volume: number;
	    server_port: number;
	    takes_limit_bytes: number;
	    voice_library_max_bytes: number;
	    voices: voice.Voice[];
	    isolate_engine: boolean;
	    batch: number;
	    voice_cache_bytes: number;
	    lexicon: lexicon.Entry[];
	
	    static createFrom(source: any = {}) {
	        return new Settings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.script = source["script"];
	        this.sampling = this.convertValues(source["sampling"], sampling.Settings);
	        this.seed = source["seed"];
	        this.max_frames = source["max_frames"];
	        this.model_dir = source["model_dir"];
	        this.presets = this.convertValues(source["presets"], Preset);
	        this.memory_cap_bytes = source["memory_cap_bytes"];
	        this.output_device = source["output_device"];
	        this.volume = source["volume"];
	        this.server_port = source["server_port"];
	        this.takes_limit_bytes = source["takes_limit_bytes"];
	        this.voice_library_max_bytes = source["voice_library_max_bytes"];
	        this.voices = this.convertValues(source["voices"], voice.Voice);
	        this.isolate_engine = source["isolate_engine"];
	        this.batch = source["batch"];
	        this.voice_cache_bytes = source["voice_cache_bytes"];
	        this.lexicon = this.convertValues(source["lexicon"], lexicon.Entry);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace takes {
	
	export class ExportRequest {
	    id: number;
	    path: string;
	    format: string;
	    overwrite: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ExportRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.path = source["path"];
	        this.format = source["format"];
	        this.overwrite = source["overwrite"];
	    }
	}
	export class ExportResult {
	    path: string;
	    bytes: number;
	    samples: number;
	    format: string;
	
	    static createFrom(source: any = {}) {
	        return new ExportResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.bytes = source["bytes"];
	        this.samples = source["samples"];
	        this.format = source["format"];
	    }
	}
	export class Peaks {
	    take_id: number;
	    bucket_samples: number;
	    samples: number;
	    values: number[];
	
	    static createFrom(source: any = {}) {
	        return new Peaks(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.take_id = source["take_id"];
	        this.bucket_samples = source["bucket_samples"];
	        this.samples = source["samples"];
	        this.values = source["values"];
	    }
	}
	export class Rerun {
	    id: number;
	    setting: string;
	    value: number;
	
	    static createFrom(source: any = {}) {
	        return new Rerun(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.setting = source["setting"];
	        this.value = source["value"];
	    }
	}
	export class Take {
	    id: number;
	    name: string;
	    request: api.SpeechRequest;
	    state: string;
	    frames: number;
	    finish?: api.Finish;
	    error: string;
	    started_ms: number;
	    frames_per_s: number;
	    samples: number;
	    sample_rate_hz: number;
	    underruns: number;
	    stored: boolean;
	    source: string;
	    voices?: string[];
	    group?: number;
	    spoken?: string;
	
	    static createFrom(source: any = {}) {
	        return new Take(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.request = this.convertValues(source["request"], api.SpeechRequest);
	        this.state = source["state"];
	        this.frames = source["frames"];
	        this.finish = this.convertValues(source["finish"], api.Finish);
	        this.error = source["error"];
	        this.started_ms = source["started_ms"];
	        this.frames_per_s = source["frames_per_s"];
	        this.samples = source["samples"];
	        this.sample_rate_hz = source["sample_rate_hz"];
	        this.underruns = source["underruns"];
	        this.stored = source["stored"];
	        this.source = source["source"];
	        this.voices = source["voices"];
	        this.group = source["group"];
	        this.spoken = source["spoken"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TakeBrief {
	    id: number;
	    name: string;
	    bytes: number;
	
	    static createFrom(source: any = {}) {
	        return new TakeBrief(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.bytes = source["bytes"];
	    }
	}
	export class TakeName {
	    id: number;
	    name: string;
	
	    static createFrom(source: any = {}) {
	        return new TakeName(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	    }
	}
	export class TakesLimitChange {
	    limit_bytes: number;
	    remove: number[];
	
	    static createFrom(source: any = {}) {
	        return new TakesLimitChange(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.limit_bytes = source["limit_bytes"];
	        this.remove = source["remove"];
	    }
	}
	export class TakesLimitEffect {
	    limit_bytes: number;
	    remove: TakeBrief[];
	    bytes: number;
	
	    static createFrom(source: any = {}) {
	        return new TakesLimitEffect(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.limit_bytes = source["limit_bytes"];
	        this.remove = this.convertValues(source["remove"], TakeBrief);
	        this.bytes = source["bytes"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Variations {
	    request: api.SpeechRequest;
	    count: number;
	    sweep: string;
	    values: number[];
	    cast?: string[];
	
	    static createFrom(source: any = {}) {
	        return new Variations(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.request = this.convertValues(source["request"], api.SpeechRequest);
	        this.count = source["count"];
	        this.sweep = source["sweep"];
	        this.values = source["values"];
	        this.cast = source["cast"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace voice {
	
	export class Voice {
	    name: string;
	    speaker?: number;
	    direction: string;
	    sampling: sampling.Settings;
	    seed: number;
	    reference?: string;
	
	    static createFrom(source: any = {}) {
	        return new Voice(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.speaker = source["speaker"];
	        this.direction = source["direction"];
	        this.sampling = this.convertValues(source["sampling"], sampling.Settings);
	        this.seed = source["seed"];
	        this.reference = source["reference"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace voices {
	
	export class CastRequest {
	    request: api.SpeechRequest;
	    cast: string[];
	
	    static createFrom(source: any = {}) {
	        return new CastRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.request = this.convertValues(source["request"], api.SpeechRequest);
	        this.cast = source["cast"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class VoiceRecording {
	    file: string;
	    data: number[];
	
	    static createFrom(source: any = {}) {
	        return new VoiceRecording(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.file = source["file"];
	        this.data = source["data"];
	    }
	}

}

