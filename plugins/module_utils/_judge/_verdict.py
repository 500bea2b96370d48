# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verdict: can the sources keep a tape drive streaming, and what must change.

Private to this collection: may change without notice. Pure functions on the
results of ``source_read_benchmark``, ``tape_drive_info`` and
``tape_write_benchmark`` plus the backup software's settings. This is the ONE
place a verdict is computed: the qualify and upgrade_check playbooks (through
the ``qualify_verdict`` action), the reports and the tests all call it.

The verdict stands on the streaming forecast (``_forecast.forecast``): the
measured per-second source rate is replayed through the drive's buffer, speed
steps, back-hitches and file marks, and the class is the forecast's:

STREAMING      the backup gets the drive's full-speed feed (native speed x tape
               compression, or what the interface sustains).
SPEED-MATCHED  the drive slows down to match the feed but keeps moving.
SHOE-SHINING   the drive back-hitches (stops, repositions, restarts) 60 times an
               hour or more, or averages below its floor (start-stop).
MISCONFIGURED  the settings hold the drive back: the forecast with the setting
               fixes (block size, immediate file marks, segment size) is a
               better class, or a setting is outright invalid (block size above
               the drive's or the HBA's limit): fix the settings, then re-run.
INCONCLUSIVE   the measurement is too short to judge (fewer than
               ``_forecast.MIN_SAMPLES`` per-second samples), with the reason.

Each fix is judged by the forecast's difference (the fix applied against the
current settings), never by a formula of its own. A host's drives share its
sources: each drive is forecast with its share of the host's feed.

All rates are decimal MB/s (10^6 bytes per second), as drive vendors quote them.
"""

from __future__ import annotations

import math

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs

STREAMING = _forecast.STREAMING
SPEED_MATCHED = _forecast.SPEED_MATCHED
SHOE_SHINING = _forecast.SHOE_SHINING
INCONCLUSIVE = _forecast.INCONCLUSIVE
MISCONFIGURED = 'MISCONFIGURED'
CLASSES = (STREAMING, SPEED_MATCHED, SHOE_SHINING, MISCONFIGURED, INCONCLUSIVE)

_RANK = _forecast.RANK

# The order fixes are listed in: settings that cost nothing first, then more
# streams (and the memory they need), then infrastructure.
FIX_ORDER = ('block_size', 'immediate_filemarks', 'segment_size', 'streams', 'memory', 'drive_path', 'staging')
# Without a streams fix, the memory rule is the last thing to do: it only matters once more
# streams run.
FIX_ORDER_NO_STREAMS = ('block_size', 'immediate_filemarks', 'segment_size', 'drive_path', 'staging', 'memory')

DEFAULTS = {
    # Most parallel streams (Data Protector Disk Agent concurrency, Bacula
    # concurrent jobs) we would recommend per drive before calling for
    # staging: Data Protector allows up to 32, but beyond ~16 interleaved
    # streams restores of one object become painfully slow.
    'max_streams': 16,
    # Memory rule of this project: 512 MB for the Media Agent / storage
    # daemon plus 512 MB per interleaved Disk Agent (stream). Data Protector
    # itself needs DAConcurrency x buffers (8) x block size of shared memory
    # for the buffers alone (Concepts guide, "Number of disk agent buffers").
    'memory_base_mb': 512,
    'memory_per_stream_mb': 512,
    # Segment size / Maximum File Size is recommended so that file marks cost
    # at most this fraction of the time.
    'filemark_loss_target': 0.01,
    # A block size counts as better only when the drive path took this much
    # more at it (the sweep's run-to-run noise on the lab and on real drives is
    # a few per cent).
    'block_size_tolerance': 0.03,
    # A user-supplied tape compression ratio (data on tape / data written);
    # None means: estimate it from the source sample, else the drive's
    # nominal ratio.
    'tape_ratio': None,
    # Size of one backup, for the window the forecast gives (GB).
    'data_gb': None,
}

# The smallest block size recommended when larger ones measure as well: IBM's LTFS
# format writes 512 KiB blocks by default and LTO drives' own throughput guidance
# starts at 256 KiB; below that the per-command cost shows on every drive.
VENDOR_MIN_BLOCK = 256 * 1024
# A block size at or above VENDOR_MIN_BLOCK is preferred unless a smaller one measured this much
# faster (more than the sweep's run-to-run noise on a busy host).
VENDOR_PREFERENCE = 0.10
# A drive path within this fraction of what the drive itself can take of that data
# is the drive's own speed, not a slow path (measurement noise).
PATH_NOISE = 0.05
# How many of a host's drives are tried when counting the drives its sources keep busy.
MAX_DRIVES_COUNTED = 16

SOFTWARE_NAMES = {
    'data_protector': 'Data Protector',
    'bacula': 'Bacula',
    'bareos': 'Bareos',
    None: 'the backup software',
}


class VerdictInputError(TapeopsError, ValueError):
    """The inputs cannot give a verdict; the message says what to do."""


# ---------------------------------------------------------------------------
# small helpers


def _get(obj, key, default=None):
    """Read ``key`` from a mapping or an object (DriveSpec dataclass)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _num(value):
    """A finite float or None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(value) or math.isinf(value):
        return None
    return value


def fmt_rate(value):
    """'123 MB/s' / '12.3 MB/s' (or 'unknown')."""
    value = _num(value)
    if value is None:
        return 'unknown'
    if value >= 100:
        return '%.0f MB/s' % value
    return '%.1f MB/s' % value


def fmt_bytes(value):
    """Block sizes in the units backup software uses (KiB / MiB)."""
    value = int(value)
    if value >= 1048576 and value % 1048576 == 0:
        return '%d MiB' % (value // 1048576)
    if value >= 1024 and value % 1024 == 0:
        return '%d KiB' % (value // 1024)
    return '%d bytes' % value


def _below(a, b):
    """a < b in words: only when the rounded figures differ too (no "177 below the 177 floor")."""
    return a is not None and b is not None and a < b and fmt_rate(a) != fmt_rate(b)


def memory_needed_mb(streams, base_mb=DEFAULTS['memory_base_mb'], per_stream_mb=DEFAULTS['memory_per_stream_mb']):
    """The memory rule: 512 MB base plus 512 MB per interleaved disk agent."""
    return int(base_mb + per_stream_mb * max(0, int(streams)))


def segment_for_loss(feed_mb_s, seconds_per_mark, loss):
    """Smallest segment (MB) whose file mark costs at most ``loss`` of the time."""
    feed = _num(feed_mb_s)
    lost = _num(seconds_per_mark)
    if feed is None or feed <= 0 or lost is None or lost <= 0:
        return None
    # time writing S/feed, time lost t: t / (S/feed + t) <= loss  =>  S >= feed * t * (1-loss)/loss
    return feed * lost * (1.0 - loss) / loss


def _pattern_ratio(pattern):
    """How compressible a sweep pattern is: 'random' 1.0, '2.5:1' 2.5, 'zeros' None (ignored)."""
    if pattern is None:
        return 1.0
    text = str(pattern).lower().replace('_', ':').replace('to', ':')
    if 'zero' in text:
        return None
    if 'random' in text or 'incompressible' in text:
        return 1.0
    head = text.split(':', maxsplit=1)[0].strip()
    head = ''.join(ch for ch in head if ch.isdigit() or ch == '.')
    ratio = _num(head)
    return ratio if ratio and ratio >= 1 else 1.0


# ---------------------------------------------------------------------------
# inputs


def source_numbers(source):
    """The feed the sources give: the per-second series and its figures, streams, passes.

    The figures obey sustained (5th percentile) <= mean <= max, whatever the
    module reported: a one-sample series cannot have a 5th percentile above
    its mean.
    """
    agg = _get(source, 'aggregate') or {}
    streams = _get(source, 'streams') or []
    series = [x for x in (_num(v) for v in (agg.get('series_mb_s') or [])) if x is not None and x >= 0]
    mean = _num(agg.get('mean_mb_s'))
    p5 = _num(agg.get('p5_mb_s'))
    if mean is None and series:
        mean = sum(series) / len(series)
    if mean is None and p5 is None:
        raise VerdictInputError(
            'The source read result has no aggregate rate (aggregate.mean_mb_s / series_mb_s): '
            'run tapeops.qualify.source_read_benchmark on the backup sources first.')
    if mean is None:
        mean = p5
    if series:
        ordered = sorted(series)
        p5_series = ordered[min(len(ordered) - 1, max(0, int(math.ceil(0.05 * len(ordered))) - 1))]
        p5 = p5_series if p5 is None else min(p5, p5_series)
        maximum = max(ordered[-1], mean)
    else:
        maximum = mean
    sustained = min(p5 if p5 is not None else mean, mean)
    count = agg.get('streams')
    if isinstance(count, list):
        count = len(count)
    count = int(_num(count) or len(streams) or 1)
    samples = int(_num(agg.get('samples')) or len(series))
    inconclusive = _get(source, 'inconclusive')
    reason = None
    if isinstance(inconclusive, dict) and inconclusive.get('reason'):
        reason = str(inconclusive['reason'])
    elif inconclusive and not isinstance(inconclusive, dict):
        reason = str(inconclusive)
    duration = _num(agg.get('duration_s')) or _num(_get(source, 'seconds')) or float(samples or 0)
    # The source module decides (it knows its budget and repeats passes to fill it) when it says;
    # a result that does not say (older module versions) needs MIN_SAMPLES per-second samples.
    module_decided = isinstance(source, dict) and 'inconclusive' in source
    if reason is None and series and not module_decided and samples < _forecast.MIN_SAMPLES:
        reason = ('the sources were read in %.0f s (%d per-second sample%s; %d needed): give a bigger tree or a '
                  'longer time budget' % (duration, samples, '' if samples == 1 else 's', _forecast.MIN_SAMPLES))
    return {
        'mean_mb_s': mean,
        'sustained_mb_s': sustained,
        'sustained_basis': 'p5' if p5 is not None else 'mean',
        'min_mb_s': _num(agg.get('min_mb_s')) if not series else min(series),
        'max_mb_s': maximum,
        'series': series,
        'samples': samples,
        'passes': _num(_get(source, 'passes')),
        'streams': count,
        'per_stream_mb_s': mean / count,
        'inconclusive': reason,
        'scaling': _scaling_curve(source),
    }


def _scaling_curve(source):
    """[(streams, mean MB/s)] measured by the source test (sorted), or []."""
    points = {}
    for row in _get(source, 'scaling') or []:
        if not isinstance(row, dict):
            continue
        streams = _num(row.get('streams'))
        mean = _num(row.get('mean_mb_s'))
        if streams and streams >= 1 and mean is not None and mean >= 0:
            points[int(streams)] = mean
    return sorted(points.items())


def feed_at_streams(src, streams):
    """(aggregate MB/s at ``streams``, basis in words) from the measured scaling curve.

    Interpolated between measured steps; past the largest one it is held flat
    (no gain assumed) and the basis says so. Without a curve, streams scale the
    measured per-stream rate linearly, and the basis says that is an assumption.
    """
    curve = src['scaling']
    if not curve:
        return src['per_stream_mb_s'] * streams, ('%d x the %s measured per stream (linear: an assumption, no '
                                                  'scaling was measured)' % (streams, fmt_rate(src['per_stream_mb_s'])))
    if streams <= curve[0][0]:
        first_n, first = curve[0]
        return first * streams / first_n, 'measured scaling (%d stream%s: %s)' % (
            first_n, '' if first_n == 1 else 's', fmt_rate(first))
    for (n0, r0), (n1, r1) in zip(curve, curve[1:]):
        if n0 <= streams <= n1:
            value = r0 + (r1 - r0) * (streams - n0) / float(n1 - n0)
            return value, 'measured scaling, %s between %d and %d streams' % (
                'at' if streams in (n0, n1) else 'interpolated', n0, n1)
    last_n, last = curve[-1]
    return last, ('no more than at %d streams (%s), the largest step measured: more streams were not measured, '
                  'so no gain is assumed' % (last_n, fmt_rate(last)))


def tape_ratio(spec, source=None, override=None):
    """(ratio, basis): the compression ratio the drive will get on this data."""
    value = _num(override)
    if value is not None:
        if value < 1:
            raise VerdictInputError('tape_ratio must be >= 1.0 (data on tape / data written), got %s.' % override)
        return value, 'set by the user'
    comp = _get(source, 'compressibility') or {}
    software_ratio = _num(comp.get('ratio'))
    if software_ratio is not None and software_ratio > 0:
        nominal = _num(_get(spec, 'compression_ratio')) or 1.0
        # The drive's compressor is not assumed to beat its nominal rating.
        estimate = _num(_drive_model.tape_ratio_from_software(software_ratio, max_ratio=max(1.0, nominal)))
        if estimate is not None:
            return max(1.0, estimate), 'estimated from a %s sample of the sources (%s ratio %.2f)' % (
                _sample_text(comp.get('sample_bytes')), comp.get('compressor') or 'software', software_ratio)
    nominal = _num(_get(spec, 'compression_ratio')) or 1.0
    return nominal, "the drive's nominal ratio, as no compressibility sample was taken: the worst case for streaming"


def _sample_text(sample_bytes):
    value = _num(sample_bytes)
    if not value:
        return 'bounded'
    return '%.0f MB' % (value / 1e6) if value >= 1e6 else '%.0f kB' % (value / 1e3)


def sweep_rates(tape, ratio):
    """({block_size: mb_s}, pattern ratio) from the write sweep, for the pattern closest to the data's ratio."""
    sweep = _get(tape, 'sweep') or []
    by_pattern = {}
    for row in sweep:
        if not isinstance(row, dict) or row.get('error') or _num(row.get('mb_s')) is None or not row.get('block_size'):
            continue
        pattern_ratio = _pattern_ratio(row.get('pattern'))
        if pattern_ratio is None:
            continue
        by_pattern.setdefault(pattern_ratio, {})[int(row['block_size'])] = _num(row['mb_s'])
    if not by_pattern:
        return {}, None
    best_pattern = min(by_pattern, key=lambda r: (abs(r - ratio), -r))
    return by_pattern[best_pattern], best_pattern


def restore_numbers(tape):
    """The read-back of the write sweep (tape_write_benchmark read_back=true), or None when there was none.

    ``mb_s`` is the restore rate of the sweep's blocks, read at the block size
    each was written with (or the size asked for); ``write_mb_s`` the write
    rate of the same blocks: the backup side of the same data on the same path.
    """
    rb = _get(tape, 'read_back')
    if not isinstance(rb, dict) or not rb.get('bytes'):
        return None
    verified = rb.get('verified')
    return {
        'mb_s': _num(rb.get('mb_s')),
        'write_mb_s': _num(rb.get('write_mb_s')),
        'bytes': int(_num(rb.get('bytes')) or 0),
        'verified': verified if isinstance(verified, bool) else None,
        'mismatched_blocks': int(_num(rb.get('mismatched_blocks')) or 0),
        'error': rb.get('error'),
        'read_size': _num(rb.get('block_size')),
        'verification': rb.get('verification'),
    }


def path_rate(rates, block_size):
    """(MB/s, basis) of the drive path at ``block_size``: measured, or modelled with a stated basis.

    Between and below measured sizes the rate follows a per-command cost fitted
    to the two nearest measured sizes (time per byte = 1/R + c/block); above the
    largest measured size no gain is assumed. A size the sweep did not measure
    never gets the sweep's best rate.
    """
    if not rates:
        return None, None
    if not block_size:
        size = max(rates, key=lambda s: (rates[s], -s))
        return rates[size], 'best measured (%s)' % fmt_bytes(size)
    if block_size in rates:
        return rates[block_size], 'measured'
    sizes = sorted(rates)
    if block_size > sizes[-1]:
        return rates[sizes[-1]], 'not measured: the rate at %s, the largest size measured' % fmt_bytes(sizes[-1])
    if block_size < sizes[0]:
        pair = sizes[:2]
        how = 'extrapolated below %s, the smallest size measured' % fmt_bytes(sizes[0])
    else:
        upper = next(s for s in sizes if s > block_size)
        lower = max(s for s in sizes if s < block_size)
        pair = [lower, upper]
        how = 'interpolated between %s and %s' % (fmt_bytes(lower), fmt_bytes(upper))
    if len(pair) < 2:
        # one measured size: scale by block size, the per-command cost taking all the time (cautious)
        value = rates[pair[0]] * min(1.0, block_size / float(pair[0]))
        return value, 'not measured: %s, scaled from the one size measured' % how
    (b0, b1), (r0, r1) = pair, (rates[pair[0]], rates[pair[1]])
    per_byte = (1.0 / r0 - 1.0 / r1) / (1.0 / b0 - 1.0 / b1) if r0 > 0 and r1 > 0 else None
    if per_byte is None or per_byte <= 0:
        value = min(r0, r1) if block_size < b1 else r1
    else:
        base = 1.0 / r1 - per_byte / b1
        value = 1.0 / (base + per_byte / block_size) if base + per_byte / block_size > 0 else min(r0, r1)
    value = max(0.0, min(value, max(r0, r1)))
    return value, 'not measured: %s (per-command cost fitted to them)' % how


def recommend_block_size(rates, tolerance, limit=None):
    """(block size, MB/s) to recommend: weighs the measured gain and the vendors' guidance.

    The smallest measured size at or above VENDOR_MIN_BLOCK within
    VENDOR_PREFERENCE (10 %) of the best rate; else the smallest within
    ``tolerance`` of it (larger blocks cost memory; smaller ones cost every
    drive a command per block).
    """
    usable = dict((s, r) for s, r in rates.items() if limit is None or s <= limit)
    if not usable:
        return None, None
    top = max(usable.values())
    good = sorted(s for s, r in usable.items() if r >= top * (1.0 - tolerance))
    preferred = sorted(s for s, r in usable.items()
                       if s >= VENDOR_MIN_BLOCK and r >= top * (1.0 - max(tolerance, VENDOR_PREFERENCE)))
    size = preferred[0] if preferred else good[0]
    return size, usable[size]


def _filemark_costs(tape):
    """seconds lost per mark for 'sync' and 'immediate' (worst segment measured)."""
    costs = {}
    for row in _get(tape, 'filemarks') or []:
        if not isinstance(row, dict):
            continue
        kind = row.get('kind')
        lost = _num(row.get('seconds_lost_per_mark'))
        if kind in ('sync', 'immediate') and lost is not None:
            costs[kind] = max(costs.get(kind, 0.0), 0.0, lost)
    return costs


def _block_limit(drive):
    """(bytes, why) of the largest block the drive and HBA take, or (None, None)."""
    limits = []
    block_limits = _get(drive, 'block_limits') or {}
    maximum = _num(block_limits.get('max') if isinstance(block_limits, dict) else None)
    if maximum:
        limits.append((int(maximum), "the drive's READ BLOCK LIMITS maximum"))
    hba = _num(_get(drive, 'hba_max_transfer_bytes'))
    if hba:
        limits.append((int(hba), "the HBA's maximum transfer"))
    if not limits:
        return None, None
    return min(limits)


def drive_link(drive):
    """(usable MB/s or None, link dict or None) of the drive's HBA link (tape_drive_info / st_preflight_info
    ``drives[].link``, from ``_hba_link``): SAS negotiated link rate or FC port speed after line encoding."""
    link = _get(drive, 'link')
    if not isinstance(link, dict):
        return None, None
    usable = _num(link.get('usable_mb_s'))
    return (usable if usable is not None and usable > 0 else None), link


def _link_name(link):
    """'SAS 6.0 Gbit' / 'FC 8 Gbit' / 'HBA'."""
    words = ' '.join(str(link[k]) for k in ('transport', 'rate') if link.get(k))
    return words or 'HBA'


# ---------------------------------------------------------------------------
# the verdict


class _Case:
    """Everything one drive's forecasts share; ``run`` forecasts one set of settings."""

    def __init__(self, spec, src, ratio, share, data_gb):
        self.spec = spec
        self.src = src
        self.ratio = ratio
        self.share = share
        self.data_gb = data_gb
        params = _forecast.drive_parameters(spec)
        self.need_full, self.need_floor = _forecast.need(params, ratio)
        self.flush_s = params['buffer_mb'] / params['native_mb_s']

    def series(self, factor=1.0):
        if self.src['series']:
            return [v * self.share * factor for v in self.src['series']]
        return None

    def run(self, path=None, segment=None, mode='immediate', mark_s=None, factor=1.0, trace=False):
        series = self.series(factor)
        reposition = None
        if mark_s is not None:
            # the benchmark wrote flat out, so its sync mark flushed a full buffer first; the rest is
            # the reposition the forecast adds after the flush
            reposition = max(0.0, mark_s - self.flush_s)
        return _forecast.forecast(
            self.spec, feed_mb_s=None if series else self.src['mean_mb_s'] * self.share * factor,
            feed_series_mb_s=series, tape_ratio=self.ratio, path_mb_s=path, segment_size_mb=segment,
            filemark_mode=mode, filemark_seconds=reposition, data_gb=self.data_gb, min_samples=0, trace=trace)


def _better(after, before, margin=0.03):
    """The forecast ``after`` is worth a fix over ``before``: a better class or clearly more MB/s."""
    if _RANK[after['class']] != _RANK[before['class']]:
        return _RANK[after['class']] > _RANK[before['class']]
    if after['backhitches_per_hour'] < before['backhitches_per_hour'] * 0.5 and before['backhitches_per_hour'] >= 1:
        return True
    return after['effective_mb_s'] > before['effective_mb_s'] * (1.0 + margin)


def _brief(fc_result):
    """A forecast without its trace, for the report."""
    return dict((k, v) for k, v in fc_result.items() if k != 'trace')


def evaluate(spec, source, tape=None, drive=None, config=None, memory_total_mb=None, other_streams=0,
             options=None, what_if=False, share=1.0, drives_sharing=1):
    """Verdict for one host x drive. See the module docstring for the classes.

    ``spec``: a DriveSpec from ``_drive_model.lookup`` (or a mapping with the
    same fields). ``source``: the source_read_benchmark result. ``tape``: the
    tape_write_benchmark result or None (not measured / what-if). ``drive``:
    the drive's entry from tape_drive_info or None. ``config``: backup software
    settings {software, block_size_bytes, immediate_filemarks, segment_size_mb,
    concurrency}. ``memory_total_mb``: RAM of the host; ``other_streams``:
    streams planned for the host's other drives (for the memory rule).
    ``share``: this drive's share of the host's source feed (the host's drives
    read from the same sources at once); ``drives_sharing``: how many drives share it.
    """
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    config = dict(config or {})
    software = config.get('software') if config.get('software') in SOFTWARE_NAMES else None
    label = _get(spec, 'label') or 'this drive'
    native = _num(_get(spec, 'native_mb_s'))
    floor = _num(_get(spec, 'speed_floor_mb_s'))
    estimated = dict(_get(spec, 'estimated') or ())

    src = source_numbers(source)
    share = _num(share) or 1.0
    ratio, ratio_basis = tape_ratio(spec, source, opts.get('tape_ratio'))
    try:
        case = _Case(spec, src, ratio, share, _num(opts.get('data_gb')))
    except _forecast.ForecastInputError as exc:
        raise VerdictInputError(str(exc)) from None
    need_full, need_floor = case.need_full, case.need_floor
    feed_mean = src['mean_mb_s'] * share
    feed_sustained = src['sustained_mb_s'] * share

    reasons = []
    findings = []
    fixes = {}

    reasons.append(
        'The sources deliver %s on average, %s sustained (5th percentile of %d per-second sample%s over %d '
        'stream%s%s)%s.' % (
            fmt_rate(src['mean_mb_s']), fmt_rate(src['sustained_mb_s']), src['samples'],
            '' if src['samples'] == 1 else 's', src['streams'], '' if src['streams'] == 1 else 's',
            ', %d pass%s' % (src['passes'], '' if src['passes'] == 1 else 'es') if src['passes'] else '',
            '' if drives_sharing <= 1 else '; %d drives share them, this one gets %.0f %%: %s on average' % (
                drives_sharing, 100 * share, fmt_rate(feed_mean))))
    sizes = _get(source, 'file_sizes') or {}
    if isinstance(sizes, dict) and sizes.get('text'):
        reasons.append(str(sizes['text']).rstrip('.') + '.')
        if sizes.get('small_file_bound'):
            findings.append({'id': 'small_file_bound', 'severity': 'warning', 'text': str(sizes['text'])})
    ingest = _get(source, 'ingest') or {}
    with_ingest = _num(((ingest.get('with') or {}).get('mean_mb_s')) if isinstance(ingest, dict) else None)
    without_ingest = _num(((ingest.get('without') or {}).get('mean_mb_s')) if isinstance(ingest, dict) else None)
    if with_ingest is not None and without_ingest is not None:
        reasons.append('With competing ingest (%s) the sources gave %s, against %s without it.' % (
            ingest.get('target_text') or 'as configured', fmt_rate(with_ingest), fmt_rate(without_ingest)))
    reasons.append('Full speed for %s needs %s: %s native x %.2f tape compression (%s)%s.' % (
        label, fmt_rate(need_full), fmt_rate(native), ratio, ratio_basis,
        '' if need_full >= native * ratio - 1e-6 else ', capped by what its interface sustains'))
    reasons.append('Its slowest speed-matching step, %s, needs %s (%s x %.2f)%s; below that the drive stops '
                   'and repositions (shoe-shining).' % (
                       fmt_rate(floor), fmt_rate(need_floor), fmt_rate(floor), ratio,
                       ' (an estimate: %s)' % estimated['speed_floor_mb_s'] if 'speed_floor_mb_s' in estimated
                       else ''))

    # -- the drive path (host -> HBA -> drive), from the write sweep
    rates, pattern_ratio = sweep_rates(tape, ratio)
    limit, limit_why = _block_limit(drive)
    configured_bs = _num(config.get('block_size_bytes')) or _num(_get(drive, 'block_size')) or None
    configured_bs = int(configured_bs) if configured_bs else None
    best_bs, best_rate = recommend_block_size(rates, opts['block_size_tolerance'], limit)
    path_now, path_basis = path_rate(rates, configured_bs)
    hard_error = False
    if configured_bs and limit and configured_bs > limit:
        hard_error = True
        findings.append({'id': 'block_size_over_limit', 'severity': 'error',
                         'text': 'The configured block size %s is larger than %s (%s): writes fail with '
                                 '"Invalid argument".' % (fmt_bytes(configured_bs), limit_why, fmt_bytes(limit))})
    if path_basis and path_basis.startswith('not measured'):
        findings.append({'id': 'block_size_not_measured', 'severity': 'warning',
                         'text': 'The sweep did not measure %s blocks; the drive path there is %s: %s. Add the size '
                                 'to the sweep (tape_write_benchmark block_sizes) to measure it.' % (
                                     fmt_bytes(configured_bs), fmt_rate(path_now), path_basis)})
    drive_takes = None
    if rates:
        sweep_text = ', '.join('%s %s' % (fmt_bytes(s), fmt_rate(rates[s])) for s in sorted(rates))
        reasons.append('The write sweep measured the drive path at %s (%s data).' % (
            sweep_text, 'incompressible' if pattern_ratio == 1.0 else '%.1f:1' % pattern_ratio))
        drive_takes = min(native * pattern_ratio, _num(_get(spec, 'compressed_max_mb_s')) or native * pattern_ratio)
    elif what_if:
        reasons.append('What-if for %s: the drive is not installed, so only the sources are measured '
                       'against its needs.' % label)
    else:
        reasons.append('The drive path was not measured (no write sweep: no scratch medium allowed or '
                       'the write test was skipped); the verdict rests on the sources alone.')

    def path_cap(rate):
        """The path limits the feed only where it is clearly below what the drive takes of that data."""
        if rate is None or drive_takes is None:
            return None
        if rate >= drive_takes * (1.0 - PATH_NOISE):
            return None
        return rate

    # -- the HBA link (sysfs: SAS negotiated link rate, FC port speed) against what the drive takes
    link_mb_s, link = drive_link(drive)
    compressed_max = _num(_get(spec, 'compressed_max_mb_s'))
    link_caps = link_mb_s is not None and link_mb_s < need_full
    if link_mb_s is not None:
        takes = '%s takes %s at %.2f:1 (its compressed maximum %s)' % (
            label, fmt_rate(need_full), ratio, fmt_rate(compressed_max))
        if link_caps and feed_mean > link_mb_s:
            reasons.append('The %s link carries %s, below the %s: the link, not the sources (%s), caps the drive '
                           '(%s).' % (_link_name(link), fmt_rate(link_mb_s), takes, fmt_rate(feed_mean),
                                      link.get('text') or 'sysfs'))
        elif link_caps:
            reasons.append('The %s link carries %s, below the %s; the sources (%s) are lower still, so they limit '
                           'first (%s).' % (_link_name(link), fmt_rate(link_mb_s), takes, fmt_rate(feed_mean),
                                            link.get('text') or 'sysfs'))
        else:
            reasons.append('The %s link carries %s, enough for the %s%s.' % (
                _link_name(link), fmt_rate(link_mb_s), takes,
                '; data that compresses better would meet the link first' if compressed_max
                and link_mb_s < compressed_max else ''))
    elif link is not None and link.get('text'):
        reasons.append('HBA link: %s.' % str(link['text']).rstrip('.'))

    def capped(rate):
        """The path the forecast gets: the sweep's cap, and the link where it is below what the drive takes."""
        cap = path_cap(rate)
        if link_caps:
            cap = link_mb_s if cap is None else min(cap, link_mb_s)
        return cap

    # -- what the drive itself counted while the write benchmark ran (LOG SENSE)
    before = _sg_logs.backhitch_count(_get(tape, 'log_pages_before'))
    after = _sg_logs.backhitch_count(_get(tape, 'log_pages_after'))
    reported = after - before if after is not None and before is not None and after >= before else None
    if reported is not None:
        reasons.append('During the write benchmark (block-size sweep and file-mark tests) the drive itself reported '
                       '%d back-hitch%s (LOG SENSE page %s, parameter %s).' % (
                           reported, '' if reported == 1 else 'es', _sg_logs.BACKHITCH_PAGE,
                           _sg_logs.BACKHITCH_PARAMETER))

    # -- restore: the read-back of the sweep, when it was asked for
    restore = restore_numbers(tape)
    if restore is not None:
        reasons.append('Read-back (restore) of the sweep\'s %.0f MB at %s: %s, against %s writing the same blocks; '
                       '%s.' % (
                           restore['bytes'] / 1e6,
                           'a %s read buffer' % fmt_bytes(restore['read_size']) if restore['read_size']
                           else 'the block sizes they were written with',
                           fmt_rate(restore['mb_s']), fmt_rate(restore['write_mb_s']),
                           'every block verified against the data written' if restore['verified'] else
                           'NOT verified'))
        if restore['verified'] is False:
            findings.append({'id': 'read_back_not_verified', 'severity': 'error',
                             'text': 'The read-back did not return what was written: %d block(s) differ%s. Check '
                                     'the drive, the HBA and the cabling (dmesg, sg_logs -a) before trusting '
                                     'restores from this path.' % (
                                         restore['mismatched_blocks'],
                                         '; %s' % restore['error'] if restore['error'] else '')})

    # -- file marks
    costs = _filemark_costs(tape)
    segment_mb = _num(config.get('segment_size_mb'))
    immediate_now = bool(config.get('immediate_filemarks'))
    immediate_possible = _get(drive, 'mtweofi_supported')
    probed = _get(tape, 'mtweofi_supported')
    if probed is not None and 'probe' in str(_get(tape, 'mtweofi_basis') or ''):
        # the write benchmark asked the driver itself on the open drive: that answer wins
        immediate_possible = probed
    if immediate_possible is None and 'immediate' in costs:
        immediate_possible = True
    software_has_immediate = software not in ('bacula', 'bareos')
    mode_now = 'immediate' if immediate_now else 'sync'
    mark_now = costs.get('sync') if mode_now == 'sync' else None

    now = case.run(capped(path_now), segment_mb, mode_now, mark_now, trace=True)
    cls_now = now['class']
    if src['inconclusive']:
        cls_now = INCONCLUSIVE
    limiter = 'the sources'
    if path_cap(path_now) is not None and path_now < feed_mean:
        limiter = 'the drive path%s' % (' at %s blocks' % fmt_bytes(configured_bs) if configured_bs else '')
    if link_caps and link_mb_s < feed_mean and (path_cap(path_now) is None or link_mb_s <= path_now):
        limiter = 'the %s link at %s' % (_link_name(link), fmt_rate(link_mb_s))
    if now['backhitches_filemark']:
        limiter += ' and synchronous file marks every %.0f MB' % segment_mb

    # -- what the settings could give: best block size, immediate marks, bigger segments
    path_fixed = best_rate if best_rate is not None and (path_now is None or best_rate > path_now) else path_now
    mode_fixed = 'immediate' if (immediate_now or (immediate_possible and software_has_immediate)) else 'sync'
    seg_fixed = segment_mb
    seg_recommended = None
    if mode_fixed == 'sync' and segment_mb:
        mark_cost = costs.get('sync')
        if mark_cost is None:
            mark_cost = case.flush_s + (_num(_get(spec, 'backhitch_s')) or 0.0)
        seg_recommended = segment_for_loss(need_full, mark_cost, opts['filemark_loss_target'])
        if seg_recommended and segment_mb < seg_recommended:
            seg_recommended = float(int(math.ceil(seg_recommended / 100.0)) * 100)
            seg_fixed = seg_recommended
        else:
            seg_recommended = None
    fixed = case.run(capped(path_fixed), seg_fixed, mode_fixed, costs.get('sync') if mode_fixed == 'sync' else None)
    cls_fixed = fixed['class'] if not src['inconclusive'] else INCONCLUSIVE

    if best_bs and configured_bs is None and rates:
        reasons.append('The block size in use is not known (set tapeops_backup.block_size_bytes or the drive\'s '
                       'block_size_bytes to judge it); the sweep recommends %s.' % fmt_bytes(best_bs))
    elif best_bs and configured_bs != best_bs and rates:
        block = case.run(capped(best_rate), segment_mb, mode_now, mark_now)
        if hard_error or _better(block, now) or (
                path_now is not None and best_rate > path_now * (1 + opts['block_size_tolerance'])
                and best_bs >= VENDOR_MIN_BLOCK > (configured_bs or 0)):
            fixes['block_size'] = {
                'title': 'Use %s tape blocks' % fmt_bytes(best_bs),
                'setting': _setting(software, 'block_size', best_bs),
                'value': best_bs,
                'why': 'The drive path took %s at %s against %s at %s%s; the forecast: %s.' % (
                    fmt_rate(best_rate), fmt_bytes(best_bs), fmt_rate(path_now),
                    fmt_bytes(configured_bs) if configured_bs else 'the current block size',
                    ' (limit: %s, %s)' % (fmt_bytes(limit), limit_why) if limit else '', _compare(now, block)),
                'feed_after_mb_s': _round(block['effective_mb_s']),
                'forecast': _brief(block),
            }
    if mode_now == 'sync' and mode_fixed == 'immediate' and segment_mb:
        immediate = case.run(capped(path_now), segment_mb, 'immediate')
        if _better(immediate, now, 0.01):
            fixes['immediate_filemarks'] = {
                'title': 'Write file marks without waiting (immediate file marks)',
                'setting': _setting(software, 'immediate_filemarks', True),
                'value': True,
                'why': 'Every %.0f MB segment ends with a synchronous file mark that empties the drive buffer '
                       'and costs a reposition (%s); the forecast: %s.' % (
                           segment_mb, '%.2f s measured per mark' % mark_now if mark_now is not None else
                           'not measured: the model\'s flush and back-hitch', _compare(now, immediate)),
                'feed_after_mb_s': _round(immediate['effective_mb_s']),
                'forecast': _brief(immediate),
            }
    if seg_recommended:
        bigger = case.run(capped(path_now), seg_recommended, 'sync', mark_now)
        if _better(bigger, now, 0.01):
            fixes['segment_size'] = {
                'title': 'Write larger segments (%.0f MB or more between file marks)' % seg_recommended,
                'setting': _setting(software, 'segment_size', int(seg_recommended)),
                'value': int(seg_recommended),
                'why': 'A synchronous file mark every %.0f MB: %s; at %.0f MB the marks cost under %.0f %% of the '
                       'time (the forecast: %s).' % (
                           segment_mb, _backhitch_words(now), seg_recommended,
                           100 * opts['filemark_loss_target'], _compare(now, bigger)),
                'feed_after_mb_s': _round(bigger['effective_mb_s']),
                'forecast': _brief(bigger),
            }

    misconfigured = hard_error or (not src['inconclusive'] and _RANK[cls_fixed] > _RANK[cls_now])
    if misconfigured and not hard_error:
        findings.append({'id': 'settings_limit_feed', 'severity': 'error',
                         'text': 'The settings hold the drive back: %s now (%s), %s after the setting fixes (%s).' % (
                             cls_now, fmt_rate(now['effective_mb_s']), cls_fixed,
                             fmt_rate(fixed['effective_mb_s']))})
    if 0 < now['backhitches_per_hour'] < _forecast.SHOESHINE_PER_HOUR and cls_now != SHOE_SHINING:
        findings.append({'id': 'occasional_backhitches', 'severity': 'warning',
                         'text': 'The forecast has the drive back-hitch %.0f times an hour (fewer than the %.0f that '
                                 'count as shoe-shining).' % (now['backhitches_per_hour'],
                                                              _forecast.SHOESHINE_PER_HOUR)})

    # -- streams: from the measured scaling curve
    planned = src['streams']
    n_floor = n_full = None
    source_limited = (path_cap(path_fixed) is None or path_fixed >= need_floor) and (
        not link_caps or link_mb_s >= need_floor)
    if not src['inconclusive'] and source_limited:
        factors = {}
        for count in range(1, int(opts['max_streams']) + 1):
            value, basis = feed_at_streams(src, count)
            factors[count] = (value / src['mean_mb_s'] if src['mean_mb_s'] else 0.0, basis)
        for count in range(1, int(opts['max_streams']) + 1):
            # below the floor on average the forecast cannot be better than shoe-shining
            if factors[count][0] <= 0 or feed_mean * factors[count][0] < need_floor * (1.0 - 1e-6):
                continue
            trial = case.run(capped(path_fixed), seg_fixed, mode_fixed,
                             costs.get('sync') if mode_fixed == 'sync' else None, factor=factors[count][0])
            if n_floor is None and trial['class'] in (SPEED_MATCHED, STREAMING):
                n_floor = count
            if trial['class'] == STREAMING:
                n_full = count
                break
        target = n_full or n_floor
        if cls_fixed != STREAMING and source_limited and target and target > src['streams']:
            planned = target
            after = case.run(capped(path_fixed), seg_fixed, mode_fixed,
                             costs.get('sync') if mode_fixed == 'sync' else None, factor=factors[target][0])
            fixes['streams'] = {
                'title': 'Run %d parallel streams into this drive' % target,
                'setting': _setting(software, 'streams', target),
                'value': target,
                'why': '%d stream%s give %s (%s); the forecast: %s%s.' % (
                    target, '' if target == 1 else 's', fmt_rate(feed_at_streams(src, target)[0] * share),
                    factors[target][1], _class_words(after, need_floor, need_full),
                    '' if n_full else '; no number of streams up to %d reaches full speed' % opts['max_streams']),
                'feed_after_mb_s': _round(after['effective_mb_s']),
                'forecast': _brief(after),
            }
        elif cls_fixed == SHOE_SHINING and source_limited and n_floor is None:
            best_value, best_basis = feed_at_streams(src, int(opts['max_streams']))
            fixes['staging'] = {
                'title': 'Stage to disk first, then copy to tape',
                'setting': _setting(software, 'staging', None),
                'value': None,
                'why': 'Even %d streams give %s (%s), and the forecast still has the drive shoe-shine; a disk '
                       'stage that reads sequentially at %s or more feeds the drive instead.' % (
                           opts['max_streams'], fmt_rate(best_value * share), best_basis, fmt_rate(need_full)),
                'feed_after_mb_s': None,
            }
    # -- the drive path: only when the sweep shows it below what the drive itself takes
    cap = path_cap(path_fixed)
    if cap is not None and cap < need_full and not src['inconclusive']:
        fixes['drive_path'] = {
            'title': 'Make the host-to-drive path faster',
            'setting': 'HBA, cabling, st driver buffer (see tapeops.qualify.st_tuning)',
            'value': None,
            'why': 'At its best block size the drive path took %s of %s data, below the %s the drive itself '
                   'takes of it; %s.' % (
                       fmt_rate(cap), 'incompressible' if pattern_ratio == 1.0 else '%.1f:1' % pattern_ratio,
                       fmt_rate(drive_takes),
                       'no number of streams gets past it' if _below(cap, need_floor) else
                       'more streams can at best make the drive speed-match'),
            'feed_after_mb_s': None,
        }

    if link_caps and link_mb_s < feed_mean and 'drive_path' not in fixes and not src['inconclusive']:
        fixes['drive_path'] = {
            'title': 'Give the drive a faster link than %s' % _link_name(link),
            'setting': 'HBA, cabling (and expander) to the drive: a link carrying %s or more' % fmt_rate(need_full),
            'value': None,
            'why': 'The %s link carries %s; %s needs %s at %.2f:1 and the sources give %s.' % (
                _link_name(link), fmt_rate(link_mb_s), label, fmt_rate(need_full), ratio, fmt_rate(feed_mean)),
            'feed_after_mb_s': None,
        }

    cls = MISCONFIGURED if misconfigured else cls_now
    if src['inconclusive']:
        reasons.append('Not enough to judge: %s.' % src['inconclusive'])
    else:
        reasons.append('The forecast at the current settings (%s limiting): %s.' % (
            limiter, _class_words(now, need_floor, need_full)))
        if misconfigured and not hard_error:
            reasons.append('With the setting fixes: %s.' % _class_words(fixed, need_floor, need_full))

    for name, words in (('buffer_mb', 'buffer %.0f MB' % (_num(_get(spec, 'buffer_mb')) or 0)),
                        ('backhitch_s', 'back-hitch %.1f s' % (_num(_get(spec, 'backhitch_s')) or 0))):
        if name in estimated:
            findings.append({'id': 'estimated_%s' % name, 'severity': 'info',
                             'text': 'The drive model\'s %s is an estimate: %s.' % (words, estimated[name])})
    if src['inconclusive']:
        # nothing the forecast says can be trusted yet; an invalid setting stays a fix
        fixes = dict((k, v) for k, v in fixes.items() if k == 'block_size' and hard_error)
    trace = now.pop('trace', [])
    verdict = {
        'class': cls,
        'class_at_current_settings': cls_now,
        'class_after_setting_fixes': cls_fixed,
        'would_shoe_shine': cls_now == SHOE_SHINING,
        'inconclusive_reason': src['inconclusive'],
        'what_if': bool(what_if),
        'drive_label': label,
        'summary': None,
        'numbers': {
            'source_mean_mb_s': _round(src['mean_mb_s']),
            'source_sustained_mb_s': _round(src['sustained_mb_s']),
            'source_sustained_basis': src['sustained_basis'],
            'source_min_mb_s': _round(src['min_mb_s']),
            'source_max_mb_s': _round(src['max_mb_s']),
            'source_samples': src['samples'],
            'feed_share': round(share, 4),
            'drives_sharing': drives_sharing,
            'feed_mean_mb_s': _round(feed_mean),
            'feed_sustained_mb_s': _round(feed_sustained),
            'streams_measured': src['streams'],
            'per_stream_mb_s': _round(src['per_stream_mb_s']),
            'tape_ratio': round(ratio, 3),
            'tape_ratio_basis': ratio_basis,
            'native_mb_s': native,
            'speed_floor_mb_s': floor,
            'floor_estimated': 'speed_floor_mb_s' in estimated,
            'need_full_mb_s': _round(need_full),
            'need_floor_mb_s': _round(need_floor),
            'drive_path_mb_s': _round(path_now),
            'drive_path_basis': path_basis,
            'drive_path_best_mb_s': _round(best_rate),
            'link_transport': (link or {}).get('transport'),
            'link_rate': (link or {}).get('rate'),
            'link_mb_s': _round(link_mb_s),
            'link_caps': link_caps,
            'block_size_bytes': configured_bs,
            'best_block_size_bytes': best_bs,
            'block_size_limit_bytes': limit,
            'filemark_seconds_sync': costs.get('sync'),
            'filemark_seconds_immediate': costs.get('immediate'),
            'filemark_mode': mode_now,
            'segment_size_mb': segment_mb,
            'feed_now_mb_s': _round(now['effective_mb_s']),
            'feed_after_setting_fixes_mb_s': _round(fixed['effective_mb_s']),
            'backhitches_per_hour_now': now['backhitches_per_hour'],
            'drive_reported_backhitches': reported,
            'backhitches_per_hour_after_setting_fixes': fixed['backhitches_per_hour'],
            'streams_needed_floor': n_floor,
            'streams_needed_full': n_full,
            'memory_needed_mb': None,
            'memory_total_mb': _num(memory_total_mb),
            'streams_planned': planned,
            'restore_mb_s': restore['mb_s'] if restore else None,
            'restore_write_mb_s': restore['write_mb_s'] if restore else None,
            'restore_verified': restore['verified'] if restore else None,
        },
        'forecast': {'now': _brief(now), 'after_setting_fixes': _brief(fixed), 'trace': trace},
        'reasons': reasons,
        'findings': findings,
        'fixes': [dict(fix, id=key) for key, fix in fixes.items()],
    }
    if what_if and not src['inconclusive']:
        _apply_host_capacity(verdict, spec, source, memory_total_mb, opts, link_mb_s if link_caps else None)
    apply_memory(verdict, memory_total_mb, other_streams, opts)
    return verdict


def apply_memory(verdict, memory_total_mb, other_streams=0, options=None):
    """Add the memory rule (all of the host's planned streams) to a verdict, rank its fixes, word its summary."""
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    num = verdict['numbers']
    fixes = dict((fix['id'], fix) for fix in verdict['fixes'] if fix['id'] != 'memory')
    streams = int(num['streams_planned']) + int(other_streams or 0)
    mem_need = memory_needed_mb(streams, opts['memory_base_mb'], opts['memory_per_stream_mb'])
    mem_total = _num(memory_total_mb)
    num['memory_needed_mb'] = mem_need
    num['memory_total_mb'] = mem_total
    if mem_total is not None and mem_total < mem_need and verdict['class'] != INCONCLUSIVE:
        fixes['memory'] = {
            'id': 'memory',
            'title': 'Give the host at least %d MB of RAM' % mem_need,
            'setting': 'RAM',
            'value': mem_need,
            'why': '%d MB base + %d MB x %d interleaved stream%s = %d MB; the host has %d MB.' % (
                opts['memory_base_mb'], opts['memory_per_stream_mb'], streams, '' if streams == 1 else 's',
                mem_need, mem_total),
            'feed_after_mb_s': None,
        }
    ranked = []
    for key in FIX_ORDER if 'streams' in fixes else FIX_ORDER_NO_STREAMS:
        if key in fixes:
            ranked.append(dict(fixes[key], id=key, rank=len(ranked) + 1))
    verdict['fixes'] = ranked
    forecasts = verdict['forecast']
    verdict['summary'] = _summary(verdict['class'], verdict['drive_label'], forecasts['now'],
                                  forecasts['after_setting_fixes'], forecasts['now']['need_floor_mb_s'],
                                  forecasts['now']['need_full_mb_s'],
                                  ranked, verdict['inconclusive_reason'])
    return verdict


def _streams_of(item, config):
    cfg = dict(config or {})
    cfg.update(item.get('config') or {})
    return max(1, int(_num(cfg.get('concurrency')) or 1))


def drives_kept_busy(spec, source, options=None, path_mb_s=None):
    """How many drives of ``spec`` the host's sources keep streaming / not shoe-shining at once.

    Each of k drives gets 1/k of the measured feed; the forecast decides (with
    ``path_mb_s``, each drive's path, e.g. its HBA link, capping its feed).
    Returns {'streaming': n, 'not_shoeshining': m} (0 when not even one).
    """
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    src = source_numbers(source)
    ratio, _basis = tape_ratio(spec, source, opts.get('tape_ratio'))
    result = {'streaming': 0, 'not_shoeshining': 0}
    if src['inconclusive']:
        return result
    for count in range(1, MAX_DRIVES_COUNTED + 1):
        trial = _Case(spec, src, ratio, 1.0 / count, None).run(path=path_mb_s)
        if trial['class'] == STREAMING:
            result['streaming'] = count
        if trial['class'] in (STREAMING, SPEED_MATCHED):
            result['not_shoeshining'] = count
        else:
            break
    return result


def host_capacity(spec, source, memory_total_mb=None, options=None, path_mb_s=None):
    """How many ``spec`` drives this host keeps busy with its measured sources, and the memory that takes.

    The drive count is ``drives_kept_busy``'s (streaming, else not shoe-shining);
    at that count the host runs the streams it was measured with, at least one
    per drive, and the memory rule asks ``memory_base_mb + memory_per_stream_mb
    x streams``. Returns {'streaming', 'not_shoeshining', 'drives', 'streams',
    'memory_needed_mb', 'memory_total_mb', 'memory_short_mb'} (memory figures
    None when no drive is kept busy or the RAM is unknown).
    """
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    busy = drives_kept_busy(spec, source, opts, path_mb_s)
    src = source_numbers(source)
    drives = busy['streaming'] or busy['not_shoeshining']
    streams = max(drives, src['streams']) if drives else 0
    need = memory_needed_mb(streams, opts['memory_base_mb'], opts['memory_per_stream_mb']) if drives else None
    total = _num(memory_total_mb)
    short = None
    if need is not None and total is not None:
        short = max(0, int(math.ceil(need - total)))
    return dict(busy, drives=drives, streams=streams, memory_needed_mb=need, memory_total_mb=total,
                memory_short_mb=short)


def _apply_host_capacity(verdict, spec, source, memory_total_mb, options, path_mb_s):
    """The what-if's host section: target drives kept busy at once and the memory at that concurrency."""
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    cap = host_capacity(spec, source, memory_total_mb, opts, path_mb_s)
    num = verdict['numbers']
    label = verdict['drive_label']
    num['drives_streaming_at_once'] = cap['streaming']
    num['drives_not_shoeshining_at_once'] = cap['not_shoeshining']
    num['streams_at_once'] = cap['streams']
    num['memory_needed_at_once_mb'] = cap['memory_needed_mb']
    held = ' (each held to its %s link)' % fmt_rate(path_mb_s) if path_mb_s else ''
    if not cap['drives']:
        verdict['reasons'].append('The host\'s sources keep no %s drive from shoe-shining%s.' % (label, held))
        return verdict
    kept = ('%d %s drive%s streaming at once (%d from shoe-shining)' % (
        cap['streaming'], label, '' if cap['streaming'] == 1 else 's', cap['not_shoeshining'])
        if cap['streaming'] else
        'no %s drive streaming at full speed, %d speed-matched at once' % (label, cap['not_shoeshining']))
    need = int(cap['memory_needed_mb'] or 0)
    memory = '%d MB base + %d MB x %d stream%s = %d MB' % (
        opts['memory_base_mb'], opts['memory_per_stream_mb'], cap['streams'], '' if cap['streams'] == 1 else 's',
        need)
    if cap['memory_total_mb'] is None:
        have = 'the host\'s RAM is not known'
    elif cap['memory_short_mb']:
        have = 'the host has %d MB, %d MB short' % (cap['memory_total_mb'], cap['memory_short_mb'])
    else:
        have = 'the host has %d MB' % cap['memory_total_mb']
    verdict['reasons'].append(
        'The host\'s sources keep %s%s; at %d drive%s (%d stream%s, at least one per drive) the memory rule asks '
        '%s; %s.' % (kept, held, cap['drives'], '' if cap['drives'] == 1 else 's', cap['streams'],
                     '' if cap['streams'] == 1 else 's', memory, have))
    if cap['memory_short_mb']:
        verdict['findings'].append({
            'id': 'memory_at_concurrency', 'severity': 'warning',
            'text': 'Running %d %s drives at once needs %d MB by the memory rule (%s); the host has %d MB.' % (
                cap['drives'], label, need, memory, cap['memory_total_mb'])})
    return verdict


def evaluate_host(drives, source, config=None, memory_total_mb=None, options=None, what_if=False):
    """Verdicts for every drive of one host: they share the sources and the memory.

    ``drives``: list of {'spec': DriveSpec, 'drive': tape_drive_info entry, 'tape': tape_write_benchmark
    result or None, 'config': per-drive settings overriding ``config``}. Each drive gets a share
    of the host's feed in proportion to its streams (the backup software's concurrency per
    drive), as all of a host's drives read from the same sources at once.
    """
    streams = [_streams_of(item, config) for item in drives]
    total = float(sum(streams)) or 1.0
    result = []
    for index, item in enumerate(drives):
        cfg = dict(config or {})
        cfg.update(item.get('config') or {})
        verdict = evaluate(item['spec'], source, item.get('tape'), item.get('drive'), cfg, None, 0,
                           options, what_if, share=streams[index] / total, drives_sharing=len(drives))
        if 'drives_streaming_at_once' in verdict['numbers']:
            result.append(verdict)
            continue
        num = verdict['numbers']
        busy = drives_kept_busy(item['spec'], source, options, num['link_mb_s'] if num.get('link_caps') else None)
        verdict['numbers']['drives_streaming_at_once'] = busy['streaming']
        verdict['numbers']['drives_not_shoeshining_at_once'] = busy['not_shoeshining']
        verdict['reasons'].append(
            'The host\'s sources, shared, keep %d %s drive%s streaming at once and %d from shoe-shining.' % (
                busy['streaming'], verdict['drive_label'], '' if busy['streaming'] == 1 else 's',
                busy['not_shoeshining']))
        result.append(verdict)
    planned = [v['numbers']['streams_planned'] for v in result]
    for index, verdict in enumerate(result):
        apply_memory(verdict, memory_total_mb, sum(planned) - planned[index], options)
    return result


def worst(classes):
    """The worst class of a list (for a host or a fleet line)."""
    order = (MISCONFIGURED, SHOE_SHINING, SPEED_MATCHED, INCONCLUSIVE, STREAMING)
    for cls in order:
        if cls in classes:
            return cls
    return None


# ---------------------------------------------------------------------------
# wording


def _round(value, digits=1):
    value = _num(value)
    return None if value is None else round(value, digits)


def _backhitch_words(result):
    per_hour = result['backhitches_per_hour']
    if not per_hour:
        return 'no back-hitches'
    return '%.0f back-hitch%s an hour (%.0f %% of the time repositioning)' % (
        per_hour, '' if round(per_hour) == 1 else 'es', 100 * result['time_share']['repositioning'])


def _compare(before, after):
    return '%s -> %s, %s -> %s' % (before['class'], after['class'], fmt_rate(before['effective_mb_s']),
                                   fmt_rate(after['effective_mb_s']))


def _class_words(result, need_floor, need_full):
    cls = result['class']
    feed = result['effective_mb_s']
    if cls == STREAMING:
        return 'STREAMING: the backup gets %s, the drive\'s full speed needs %s; %s' % (
            fmt_rate(feed), fmt_rate(need_full), _backhitch_words(result))
    if cls == SPEED_MATCHED:
        return ('SPEED-MATCHED: the backup gets %s, between the %s floor and %s full speed: the drive slows down '
                'but keeps moving (%s)' % (fmt_rate(feed), fmt_rate(need_floor), fmt_rate(need_full),
                                           _backhitch_words(result)))
    if cls == SHOE_SHINING:
        below = (', below the %s floor' % fmt_rate(need_floor)) if _below(feed, need_floor) else ''
        return 'SHOE-SHINING: %s; the backup gets %s%s' % (_backhitch_words(result), fmt_rate(feed), below)
    return '%s: %s' % (cls, result.get('inconclusive_reason') or 'not enough data')


def _summary(cls, label, now, fixed, need_floor, need_full, fixes, inconclusive):
    feed = now['effective_mb_s']
    if cls == INCONCLUSIVE:
        head = 'Not enough data to judge %s: %s.' % (label, inconclusive)
    elif cls == STREAMING:
        head = '%s streams: the backup gets %s, full speed needs %s.' % (label, fmt_rate(feed), fmt_rate(need_full))
    elif cls == SPEED_MATCHED:
        head = '%s speed-matches: the backup gets %s, below full speed (%s) but above the floor (%s).' % (
            label, fmt_rate(feed), fmt_rate(need_full), fmt_rate(need_floor))
    elif cls == SHOE_SHINING:
        head = '%s would shoe-shine: %s; the backup gets %s%s.' % (
            label, _backhitch_words(now), fmt_rate(feed),
            (' (floor %s)' % fmt_rate(need_floor)) if _below(feed, need_floor) else '')
    else:
        head = '%s is held back by its settings: %s now (%s), %s after the setting fixes (%s).' % (
            label, now['class'], fmt_rate(feed), fixed['class'], fmt_rate(fixed['effective_mb_s']))
    if fixes:
        head += ' First fix: %s.' % fixes[0]['title']
    return head


def _setting(software, fix, value):
    """Where to change it, in the words of the backup software."""
    if fix == 'block_size':
        if software == 'data_protector':
            return 'Data Protector device > Properties > Settings > Advanced > Sizes: Block size (kB) = %d' % (
                value // 1024)
        if software in ('bacula', 'bareos'):
            return '%s storage daemon Device resource: Maximum Block Size = %d' % (SOFTWARE_NAMES[software], value)
        return 'the backup software\'s tape block size: %s' % fmt_bytes(value)
    if fix == 'immediate_filemarks':
        if software == 'data_protector':
            return 'omnirc on the Media Agent: OB2IMMEDFM=1 (tapeops.qualify.dp_omnirc)'
        return 'immediate file marks (MTWEOFI) in the writer'
    if fix == 'segment_size':
        if software == 'data_protector':
            return 'Data Protector device > Advanced > Sizes: Segment size (MB) = %d' % value
        if software in ('bacula', 'bareos'):
            return '%s Device resource: Maximum File Size = %dM' % (SOFTWARE_NAMES[software], value)
        return 'data between file marks: %d MB' % value
    if fix == 'streams':
        if software == 'data_protector':
            return 'Data Protector device or backup specification: Concurrency (Disk Agents) = %d' % value
        if software in ('bacula', 'bareos'):
            return '%s: Maximum Concurrent Jobs = %d on the Storage and Device resources' % (
                SOFTWARE_NAMES[software], value)
        return '%d parallel backup streams into the drive' % value
    if fix == 'staging':
        if software == 'data_protector':
            return 'Data Protector: back up to a disk (B2D / file library) device, then object copy to tape'
        if software in ('bacula', 'bareos'):
            return '%s Job: Spool Data = yes, Device: Spool Directory on a fast disk' % SOFTWARE_NAMES[software]
        return 'back up to disk first, then copy to tape'
    return str(value)  # pragma: no cover


def mechanics_findings(mechanics, side='current'):
    """Findings from a ``tape_mechanics_benchmark`` result (the host document's mechanics entry).

    ``side``: 'current' for the measured drive's own verdict, 'target' for the
    what-if. A backup segment or file size below the size that reaches 90 % of
    the streaming rate with the measured time per file mark is a warning; a
    cartridge the benchmark could not put back is an error.
    """
    out = []
    if not isinstance(mechanics, dict):
        return out
    for warning in mechanics.get('size_warnings') or []:
        if isinstance(warning, dict) and warning.get('drive') == side and warning.get('text'):
            out.append({'id': 'object_size_below_90', 'severity': 'warning',
                        'text': 'Library and drive mechanics: %s' % warning['text']})
    if side == 'current' and mechanics.get('restored') is False:
        out.append({'id': 'mechanics_cartridge_not_restored', 'severity': 'error',
                    'text': 'The mechanics benchmark could not put %s back where it started (%s): put it back by '
                            'hand before the next backup.' % (mechanics.get('barcode') or 'the cartridge',
                                                              mechanics.get('final_location') or 'unknown')})
    return out
