import { render } from 'preact';
import { App } from './App';
import { startRealtime } from './realtime';
import './styles.css';

startRealtime();
render(<App />, document.getElementById('root')!);
