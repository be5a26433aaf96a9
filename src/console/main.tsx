import { render } from 'preact';
import { App } from './App';
import { startRealtime } from './shared/realtime';
import './styles.css';

startRealtime();
render(<App />, document.getElementById('root')!);
