export namespace app {
	
	export class ModelStatus {
	    state: string;
	    dir: string;
	    info?: engine.Info;
	    message: string;
	    error: string;
	    can_load: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ModelStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.state = source["state"];
	        this.dir = source["dir"];
	        this.info = this.convertValues(source["info"], engine.Info);
	        this.message = source["message"];
	        this.error = source["error"];
	        this.can_load = source["can_load"];
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
	    sampling: engine.Sampling;
	    seed: number;
	    max_frames: number;
	    model_dir: string;
	
	    static createFrom(source: any = {}) {
	        return new Settings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.script = source["script"];
	        this.sampling = this.convertValues(source["sampling"], engine.Sampling);
	        this.seed = source["seed"];
	        this.max_frames = source["max_frames"];
	        this.model_dir = source["model_dir"];
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
	    memory?: engine.Memory;
	    last_take?: engine.Finish;
	
	    static createFrom(source: any = {}) {
	        return new StatsView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.loaded = source["loaded"];
	        this.message = source["message"];
	        this.memory = this.convertValues(source["memory"], engine.Memory);
	        this.last_take = this.convertValues(source["last_take"], engine.Finish);
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
	export class Take {
	    id: number;
	    request: engine.SpeechRequest;
	    state: string;
	    frames: number;
	    finish?: engine.Finish;
	    error: string;
	    started_ms: number;
	
	    static createFrom(source: any = {}) {
	        return new Take(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.request = this.convertValues(source["request"], engine.SpeechRequest);
	        this.state = source["state"];
	        this.frames = source["frames"];
	        this.finish = this.convertValues(source["finish"], engine.Finish);
	        this.error = source["error"];
	        this.started_ms = source["started_ms"];
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

export namespace engine {
	
	export class Finish {
	    reason: string;
	    frames: number;
	    audio_seconds: number;
	    time_to_first_audio: number;
	    elapsed: number;
	    real_time_factor: number;
	    stages: Record<string, number>;
	
	    static createFrom(source: any = {}) {
	        return new Finish(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.reason = source["reason"];
	        this.frames = source["frames"];
	        this.audio_seconds = source["audio_seconds"];
	        this.time_to_first_audio = source["time_to_first_audio"];
	        this.elapsed = source["elapsed"];
	        this.real_time_factor = source["real_time_factor"];
	        this.stages = source["stages"];
	    }
	}
	export class Info {
	    model: string;
	    backend: string;
	    demo: boolean;
	    sample_rate: number;
	    samples_per_frame: number;
	    codebooks: number;
	    codebook_sizes?: number[];
	    parameters: number;
	
	    static createFrom(source: any = {}) {
	        return new Info(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.model = source["model"];
	        this.backend = source["backend"];
	        this.demo = source["demo"];
	        this.sample_rate = source["sample_rate"];
	        this.samples_per_frame = source["samples_per_frame"];
	        this.codebooks = source["codebooks"];
	        this.codebook_sizes = source["codebook_sizes"];
	        this.parameters = source["parameters"];
	    }
	}
	export class Memory {
	    device: string;
	    used: number;
	    peak: number;
	    cap: number;
	
	    static createFrom(source: any = {}) {
	        return new Memory(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.device = source["device"];
	        this.used = source["used"];
	        this.peak = source["peak"];
	        this.cap = source["cap"];
	    }
	}
	export class Sampling {
	    temperature: number;
	    top_p: number;
	    top_k: number;
	
	    static createFrom(source: any = {}) {
	        return new Sampling(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.temperature = source["temperature"];
	        this.top_p = source["top_p"];
	        this.top_k = source["top_k"];
	    }
	}
	export class SpeechRequest {
	    text: string;
	    sampling: Sampling;
	    seed: number;
	    max_frames: number;
	
	    static createFrom(source: any = {}) {
	        return new SpeechRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.text = source["text"];
	        this.sampling = this.convertValues(source["sampling"], Sampling);
	        this.seed = source["seed"];
	        this.max_frames = source["max_frames"];
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

