#include "report/page_shell.h"

#include "common/sha256.h"
#include "report/html_text.h"

namespace kd::report {
namespace {

// Plain CSS; readable from a phone's width up; print drops the controls and folds nothing away.
constexpr std::string_view kStyle = R"css(
:root{--fg:#1b1f24;--muted:#5b6570;--line:#d8dde3;--bg:#fff;--soft:#f5f7f9;--bad:#b42318;--good:#067647;--warn:#b54708;--info:#175cd3}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:16px;max-width:1400px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
a{color:var(--info)}
.muted{color:var(--muted)}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;border:1px solid currentColor;white-space:nowrap}
.o-supported{color:var(--good)}.o-refuted{color:#344054}.o-inconclusive{color:var(--warn)}.o-invalid,.o-error{color:var(--bad)}.o-running,.o-unfinished,.o-refused{color:var(--muted)}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 6px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--soft);cursor:pointer;user-select:none;white-space:nowrap;position:sticky;top:0}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.hyp{max-width:420px}
.why{display:block;color:var(--muted);font-size:12px;overflow-wrap:anywhere}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0}
.controls input,.controls select{font:inherit;padding:3px 6px}
svg{max-width:100%;height:auto;display:block}
svg text{font:11px system-ui,sans-serif;fill:var(--fg)}
.legend{display:flex;flex-wrap:wrap;gap:10px;font-size:12px;margin:4px 0}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);padding:8px;border-radius:4px;margin:4px 0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
details>summary{cursor:pointer}
.card,header p{overflow-wrap:anywhere}
.card{border:1px solid var(--line);border-radius:6px;padding:10px 12px;margin:10px 0}
.turns .e{border-left:3px solid var(--line);padding:4px 10px;margin:6px 0}
.turns .e.response{border-color:var(--info)}.turns .e.call{border-color:#98a2b3}.turns .e.hl{border-color:var(--bad);background:#fef3f2}
.turns .e.end{border-color:var(--good)}.turns .e.bad{border-color:var(--bad)}
.turns .meta{font-size:12px;color:var(--muted)}
.turns.only-hl .e:not(.hl){display:none}
.chain-ok{color:var(--good)}.chain-bad{color:var(--bad)}
@media (max-width:700px){body{padding:8px}td.hyp{max-width:220px}dl.kv{grid-template-columns:1fr}}
@media print{.controls{display:none}th{position:static}body{max-width:none}details{display:block}a{color:inherit}}
)css";

// Vanilla script: sorting, filtering, the refusals-only switch. Attached by id; no inline
// handlers anywhere, so the CSP can allow this script alone.
constexpr std::string_view kScript =
    R"js((function(){
var d=document,t=d.getElementById('exp');
if(t){var b=t.tBodies[0],rows=[].slice.call(b.rows),q=d.getElementById('q'),f=d.getElementById('outcome'),n=d.getElementById('shown'),hs=[].slice.call(t.tHead.rows[0].cells);
var apply=function(){var s=q.value.toLowerCase(),o=f.value,k=0;rows.forEach(function(r){var ok=(!o||r.getAttribute('data-outcome')===o)&&(!s||r.textContent.toLowerCase().indexOf(s)>=0);r.hidden=!ok;if(ok)k++;});n.textContent=k+' of '+rows.length+' shown';};
q.addEventListener('input',apply);f.addEventListener('change',apply);
hs.forEach(function(th,i){th.addEventListener('click',function(){var asc=th.getAttribute('aria-sort')!=='ascending';hs.forEach(function(c){c.removeAttribute('aria-sort');});th.setAttribute('aria-sort',asc?'ascending':'descending');var num=th.getAttribute('data-type')==='num';
var key=function(r){var c=r.cells[i],v=c.getAttribute('data-v');return v===null?c.textContent:v;};
rows.sort(function(x,y){var a=key(x),c=key(y),r=num?(parseFloat(a)||0)-(parseFloat(c)||0):a.localeCompare(c);return asc?r:-r;});rows.forEach(function(r){b.appendChild(r);});});});
apply();}
var hl=d.getElementById('only-hl');if(hl){var tv=d.getElementById('turns');hl.addEventListener('change',function(){tv.classList.toggle('only-hl',hl.checked);});}
})();)js";

}  // namespace

std::string script_hash_source() {
  Digest dg = sha256(kScript);
  return "'sha256-" +
         base64(std::string_view(reinterpret_cast<const char*>(dg.data()), dg.size())) + "'";
}

std::string html_page(std::string_view title, std::string_view body) {
  static const std::string csp =
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
      "script-src " +
      script_hash_source() + "; base-uri 'none'; form-action 'none'";
  std::string out;
  out.reserve(body.size() + kStyle.size() + kScript.size() + 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + csp + "\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n";
  out += "<meta name=\"referrer\" content=\"no-referrer\">\n<title>";
  append_escaped(out, title);
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style></head>\n<body>\n";
  out += body;
  out += "\n<script>";
  out += kScript;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace kd::report
