// gpucloud console: keyboard navigation and a job's live output. Every page works without it.
(function () {
  'use strict';

  function typing(target) {
    var tag = target && target.tagName;
    return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (target && target.isContentEditable);
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll('table.list tbody tr'))
      .filter(function (r) { return r.querySelector('a'); });
  }

  function select(step) {
    var all = rows();
    if (all.length === 0) {
      return;
    }
    var at = all.findIndex(function (r) { return r.classList.contains('selected'); });
    var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    if (at >= 0) {
      all[at].classList.remove('selected');
    }
    all[next].classList.add('selected');
    all[next].querySelector('a').focus();
  }

  function toggleKeys(show) {
    var keys = document.getElementById('keys');
    if (keys) {
      keys.hidden = show === undefined ? !keys.hidden : !show;
    }
  }

  var pendingG = false;
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) {
      return;
    }
    if (e.key === 'Escape') {
      toggleKeys(false);
      if (typing(e.target)) {
        e.target.blur();
      }
      return;
    }
    if (typing(e.target)) {
      return;
    }
    if (pendingG) {
      pendingG = false;
      if (e.key === 'j') {
        window.location.href = '/console/jobs';
      } else if (e.key === 't') {
        window.location.href = '/console/tenant';
      }
      e.preventDefault();
      return;
    }
    switch (e.key) {
      case 'j': select(1); break;
      case 'k': select(-1); break;
      case 'g': pendingG = true; break;
      case '?': toggleKeys(); break;
      case '/':
        var filter = document.getElementById('filter') || document.getElementById('rank');
        if (filter) {
          filter.focus();
        }
        break;
      case 'Enter':
        var chosen = document.querySelector('table.list tbody tr.selected a');
        if (chosen && document.activeElement !== chosen) {
          window.location.href = chosen.href;
        } else {
          return; // the focused link opens itself
        }
        break;
      default: return;
    }
    e.preventDefault();
  });

  document.addEventListener('DOMContentLoaded', function () {
    var toggle = document.getElementById('keys-toggle');
    if (toggle) {
      toggle.addEventListener('click', function () { toggleKeys(); });
    }
    var filter = document.getElementById('filter');
    if (filter && filter.form) { // a new state filter applies at once
      filter.addEventListener('change', function () { filter.form.submit(); });
    }
    follow();
  });

  // A job's output as it is written: server-sent events from /console/jobs/ID/logs, each line inserted as text.
  function follow() {
    var output = document.getElementById('output');
    var status = document.getElementById('output-status');
    if (!output || !output.dataset.src || !window.EventSource) {
      return;
    }
    var multi = document.querySelectorAll('#placement tbody tr').length > 1;
    status.textContent = 'Following the output…';
    var source = new EventSource(output.dataset.src);
    var lines = 0;
    source.addEventListener('line', function (e) {
      var line = JSON.parse(e.data);
      var atEnd = output.scrollTop + output.clientHeight >= output.scrollHeight - 4;
      var span = document.createElement('span');
      span.className = line.stream;
      span.textContent = (multi ? '[rank ' + line.rank + ' ' + line.stream + '] ' : '') + line.text + '\n';
      output.appendChild(span);
      lines++;
      status.textContent = 'Following the output: ' + lines + (lines === 1 ? ' line' : ' lines') + '.';
      if (atEnd) {
        output.scrollTop = output.scrollHeight;
      }
    });
    source.addEventListener('waiting', function (e) {
      status.textContent = JSON.parse(e.data).message + ' Its output appears here when it runs.';
    });
    source.addEventListener('end', function (e) {
      source.close();
      status.textContent = JSON.parse(e.data).message + ' (' + lines + (lines === 1 ? ' line' : ' lines') + ').';
    });
    source.addEventListener('failure', function (e) {
      source.close();
      status.textContent = JSON.parse(e.data).message;
    });
    source.onerror = function () {
      if (source.readyState !== EventSource.CLOSED) {
        source.close();
        status.textContent = 'The output stream was interrupted; reload the page to follow it again.';
      }
    };
  }
})();
