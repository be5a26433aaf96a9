import { render } from 'preact';
import { App } from './App';
import { startRealtime } from './shared/realtime';
import { startBell } from './team/notifications';
import './styles.css';

startRealtime();
startBell();
render(<App />, document.getElementById('root')!);
