import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { createService } from './lib/service';
import { pickTransport } from './lib/transport';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
mount(App, { target, props: { service: createService(pickTransport()) } });
