# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verdict: can the sources keep a tape drive streaming, and what must change.

Private to this collection: may change without notice. Pure functions on the
results of ``source_read_benchmark``, ``tape_drive_info`` and
``tape_write_benchmark`` plus the backup software's settings. This is the ONE
place a verdict is computed: the qualify and upgrade_check playbooks (through
the ``qualify_verdict`` action), the reports and the tests all call it.

Classes, from best to worst:

STREAMING      the sustained feed (5th percentile of the per-second aggregate
               rate, not the mean) reaches native speed x tape compression ratio.
SPEED-MATCHED  the feed is below full speed but at or above the drive's
               speed-matching floor x ratio: the drive slows down, never stops.
SHOE-SHINING   the feed is below the floor x ratio: the drive empties its
               buffer, stops, rewinds a little and restarts (back-hitches).
MISCONFIGURED  the hardware could do better than the settings let it (block
               size, synchronous file marks, tiny segments), or a setting is
               outright invalid (block size above the drive's or the HBA's
               limit): fix the settings first, then re-run.

All rates are decimal MB/s (10^6 bytes per second), as drive vendors quote them.
"""

from __future__ import annotations

import math

from ansible_collections.tapeops.qualify.plugins.module_utils import _drive_model

STREAMING = 'STREAMING'
SPEED_MATCHED = 'SPEED-MATCHED'
SHOE_SHINING = 'SHOE-SHINING'
MISCONFIGURED = 'MISCONFIGURED'
CLASSES = (STREAMING, SPEED_MATCHED, SHOE_SHINING, MISCONFIGURED)

# Higher is better; MISCONFIGURED is decided separately.
_RANK = {SHOE_SHINING: 0, SPEED_MATCHED: 1, STREAMING: 2}

# The order fixes are listed in: settings that cost nothing first, then more
# streams (and the memory they need), then infrastructure.
FIX_ORDER = ('block_size', 'immediate_filemarks', 'segment_size', 'drive_path', 'streams', 'memory',
             'staging')

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
    # The recommended block size is the smallest one within this fraction of
    # the best rate the sweep measured (larger blocks than needed only waste
    # memory and make other readers fail).
    'block_size_tolerance': 0.03,
    # A user-supplied tape compression ratio (data on tape / data written);
    # None means: estimate it from the source sample, else the drive's
    # nominal ratio.
    'tape_ratio': None,
}

SOFTWARE_NAMES = {
    'data_protector': 'Data Protector',
    'bacula': 'Bacula',
    'bareos': 'Bareos',
    None: 'the backup software',
}


class VerdictInputError(ValueError):
    """The inputs cannot give a verdict; the message says what to do."""


# ---------------------------------------------------------------------------
# small helpers


def _get(obj, key, default=None):
    """Read ``key`` from a mapping or an object (DriveSpec namedtuple/dataclass)."""
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
    """'123.4 MB/s' (or 'unknown')."""
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


def classify(spec, feed_mb_s, ratio):
    """STREAMING / SPEED-MATCHED / SHOE-SHINING for one feed rate.

    The boundaries are the drive model's (``_drive_model.classify_feed``) and
    inclusive on the good side: a feed exactly at full speed streams, a feed
    exactly at the floor speed-matches. With the floor unknown, anything
    below full speed counts as shoe-shining (the cautious reading).
    """
    feed = _num(feed_mb_s)
    if feed is None:
        raise VerdictInputError('No feed rate to classify: run the source read test first.')
    if feed <= 0:
        return SHOE_SHINING
    state = _drive_model.classify_feed(spec, feed, ratio)['state']
    return {'full_speed': STREAMING, 'speed_matching': SPEED_MATCHED}.get(state, SHOE_SHINING)


def streams_needed(target_mb_s, per_stream_mb_s):
    """Parallel streams needed so that ``per_stream_mb_s`` each add up to ``target_mb_s``."""
    per = _num(per_stream_mb_s)
    if per is None or per <= 0:
        return None
    # A tiny epsilon keeps 3 x 33.333... from becoming 4 through float rounding.
    return max(1, int(math.ceil(target_mb_s / per - 1e-9)))


def memory_needed_mb(streams, base_mb=DEFAULTS['memory_base_mb'], per_stream_mb=DEFAULTS['memory_per_stream_mb']):
    """The memory rule: 512 MB base plus 512 MB per interleaved disk agent."""
    return int(base_mb + per_stream_mb * max(0, int(streams)))


def filemark_rate(feed_mb_s, segment_mb, seconds_per_mark):
    """Average rate when every ``segment_mb`` of data ends with a mark costing ``seconds_per_mark``."""
    feed = _num(feed_mb_s)
    seg = _num(segment_mb)
    lost = _num(seconds_per_mark)
    if feed is None or feed <= 0 or not seg or lost is None or lost <= 0:
        return feed
    return seg / (seg / feed + lost)


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
    """The feed the sources give: aggregate mean, sustained floor (p5), minimum, streams."""
    agg = _get(source, 'aggregate') or {}
    streams = _get(source, 'streams') or []
    mean = _num(agg.get('mean_mb_s'))
    p5 = _num(agg.get('p5_mb_s'))
    if mean is None and p5 is None:
        raise VerdictInputError(
            'The source read result has no aggregate rate (aggregate.mean_mb_s / p5_mb_s): '
            'run tapeops.qualify.source_read_benchmark on the backup sources first.')
    count = agg.get('streams')
    if isinstance(count, list):
        count = len(count)
    count = int(count or len(streams) or 1)
    sustained = p5 if p5 is not None else mean
    return {
        'mean_mb_s': mean if mean is not None else p5,
        'sustained_mb_s': sustained,
        'sustained_basis': 'p5' if p5 is not None else 'mean',
        'min_mb_s': _num(agg.get('min_mb_s')),
        'streams': count,
        'per_stream_mb_s': sustained / count if sustained is not None else None,
        'stream_means_mb_s': [_num(s.get('mean_mb_s')) for s in streams],
    }


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


def drive_needs(spec, ratio):
    """Feed needed for full speed and for the floor; floor falls back to full speed when unknown."""
    feed = _drive_model.required_feed(spec, ratio)
    full = _num(_get(feed, 'full_speed_mb_s'))
    floor = _num(_get(feed, 'floor_mb_s'))
    if full is None:
        raise VerdictInputError('The drive model gave no native rate for %s.' % _get(spec, 'label', 'this drive'))
    return {
        'need_full_mb_s': full,
        'need_floor_mb_s': floor if floor is not None else full,
        'floor_known': floor is not None,
    }


def sweep_rates(tape, ratio):
    """{block_size: mb_s} from the write sweep, for the pattern closest to the data's ratio."""
    sweep = _get(tape, 'sweep') or []
    by_pattern = {}
    for row in sweep:
        if row.get('error') or _num(row.get('mb_s')) is None or not row.get('block_size'):
            continue
        pattern_ratio = _pattern_ratio(row.get('pattern'))
        if pattern_ratio is None:
            continue
        by_pattern.setdefault(pattern_ratio, {})[int(row['block_size'])] = _num(row['mb_s'])
    if not by_pattern:
        return {}
    best_pattern = min(by_pattern, key=lambda r: (abs(r - ratio), -r))
    return by_pattern[best_pattern]


def rate_at(rates, block_size):
    """Rate the sweep measured at ``block_size`` (or the largest size below it)."""
    if not rates or not block_size:
        return None
    sizes = sorted(s for s in rates if s <= block_size)
    if not sizes:
        return None
    return rates[sizes[-1]]


def best_block_size(rates, tolerance, limit=None):
    """Smallest block size within ``tolerance`` of the best measured rate (under ``limit``)."""
    usable = dict((s, r) for s, r in rates.items() if limit is None or s <= limit)
    if not usable:
        return None, None
    top = max(usable.values())
    for size in sorted(usable):
        if usable[size] >= top * (1.0 - tolerance):
            return size, usable[size]
    return None, None  # pragma: no cover - the max always qualifies


def _filemark_costs(tape):
    """seconds lost per mark for 'sync' and 'immediate' (worst segment measured)."""
    costs = {}
    for row in _get(tape, 'filemarks') or []:
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


# ---------------------------------------------------------------------------
# the verdict


def evaluate(spec, source, tape=None, drive=None, config=None, memory_total_mb=None, other_streams=0,
             options=None, what_if=False):
    """Verdict for one host x drive. See the module docstring for the classes.

    ``spec``: a DriveSpec from ``_drive_model.lookup`` (or a mapping with the
    same fields). ``source``: the source_read_benchmark result. ``tape``: the
    tape_write_benchmark result or None (not measured / what-if). ``drive``:
    the drive's entry from tape_drive_info or None. ``config``: backup software
    settings {software, block_size_bytes, immediate_filemarks, segment_size_mb,
    concurrency}. ``memory_total_mb``: RAM of the host; ``other_streams``:
    streams planned for the host's other drives (for the memory rule).
    """
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    config = dict(config or {})
    software = config.get('software') if config.get('software') in SOFTWARE_NAMES else None
    label = _get(spec, 'label') or 'this drive'
    native = _num(_get(spec, 'native_mb_s'))
    floor = _num(_get(spec, 'speed_floor_mb_s'))

    src = source_numbers(source)
    ratio, ratio_basis = tape_ratio(spec, source, opts.get('tape_ratio'))
    needs = drive_needs(spec, ratio)
    need_full, need_floor = needs['need_full_mb_s'], needs['need_floor_mb_s']
    sustained = src['sustained_mb_s']

    reasons = []
    findings = []
    fixes = {}

    reasons.append(
        'The sources deliver %s sustained (%s of the per-second aggregate over %d stream%s; mean %s%s).' % (
            fmt_rate(sustained), '5th percentile' if src['sustained_basis'] == 'p5' else 'mean',
            src['streams'], '' if src['streams'] == 1 else 's', fmt_rate(src['mean_mb_s']),
            ', minimum %s' % fmt_rate(src['min_mb_s']) if src['min_mb_s'] is not None else ''))
    reasons.append('Full speed for %s needs %s: %s native x %.2f tape compression (%s).' % (
        label, fmt_rate(need_full), fmt_rate(native), ratio, ratio_basis))
    if needs['floor_known']:
        reasons.append('Its speed-matching floor needs %s (%s x %.2f); below that the drive stops and '
                       'repositions (shoe-shining).' % (fmt_rate(need_floor), fmt_rate(floor), ratio))
    else:
        reasons.append('No source gives the speed-matching floor of %s, so anything below full speed is '
                       'treated as shoe-shining; set speed_floor_mb_s for this drive in the inventory if you '
                       'know it.' % label)
        findings.append({'id': 'floor_unknown', 'severity': 'info',
                         'text': 'Speed-matching floor unknown for %s: assumed equal to full speed.' % label})

    # -- the drive path (host -> HBA -> drive), from the write sweep
    rates = sweep_rates(tape, ratio)
    limit, limit_why = _block_limit(drive)
    configured_bs = _num(config.get('block_size_bytes')) or _num(_get(drive, 'block_size')) or None
    configured_bs = int(configured_bs) if configured_bs else None
    best_bs, best_rate = best_block_size(rates, opts['block_size_tolerance'], limit)
    path_now = rate_at(rates, configured_bs) if configured_bs else best_rate
    if path_now is None and rates:
        path_now = best_rate
    hard_error = False

    if configured_bs and limit and configured_bs > limit:
        hard_error = True
        findings.append({'id': 'block_size_over_limit', 'severity': 'error',
                         'text': 'The configured block size %s is larger than %s (%s): writes fail with '
                                 '"Invalid argument".' % (fmt_bytes(configured_bs), limit_why, fmt_bytes(limit))})
    if rates:
        sweep_text = ', '.join('%s %s' % (fmt_bytes(s), fmt_rate(rates[s])) for s in sorted(rates))
        reasons.append('The write sweep measured the drive path at %s.' % sweep_text)
        if _get(tape, 'ceiling_block_size'):
            reasons.append('The largest block size the drive path accepted was %s.' % fmt_bytes(
                _get(tape, 'ceiling_block_size')))
    elif what_if:
        reasons.append('What-if for %s: the drive is not installed, so only the sources are measured '
                       'against its needs.' % label)
    else:
        reasons.append('The drive path was not measured (no write sweep: no scratch medium allowed or '
                       'the write test was skipped); the verdict rests on the sources alone.')

    # -- file marks
    costs = _filemark_costs(tape)
    segment_mb = _num(config.get('segment_size_mb'))
    immediate_now = config.get('immediate_filemarks')
    immediate_possible = _get(drive, 'mtweofi_supported')
    if immediate_possible is None and 'immediate' in costs:
        immediate_possible = True
    mark_now = costs.get('immediate' if immediate_now else 'sync')
    if mark_now is None and immediate_now:
        mark_now = 0.0

    def feed_with(path_rate, mark_cost, seg):
        feed = sustained if path_rate is None else min(sustained, path_rate)
        return filemark_rate(feed, seg, mark_cost)

    feed_now = feed_with(path_now, mark_now, segment_mb)
    limiter = 'the sources'
    if path_now is not None and path_now < sustained:
        limiter = 'the drive path%s' % (' at %s blocks' % fmt_bytes(configured_bs) if configured_bs else '')
    if feed_now is not None and feed_now < min(sustained, path_now or sustained) * 0.999:
        limiter += ' and synchronous file marks every %.0f MB (%.2f s lost each)' % (segment_mb, mark_now)
    cls_now = classify(spec, feed_now, ratio)

    # -- what the settings could give: best block size, immediate marks, bigger segments
    path_fixed = best_rate if best_rate is not None else path_now
    if immediate_possible and software != 'bacula' and software != 'bareos':
        mark_fixed = costs.get('immediate', 0.0)
    else:
        mark_fixed = mark_now
    seg_fixed = segment_mb
    seg_recommended = segment_for_loss(need_full, mark_fixed, opts['filemark_loss_target'])
    if segment_mb and seg_recommended and segment_mb < seg_recommended:
        seg_fixed = seg_recommended
    feed_fixed = feed_with(path_fixed, mark_fixed, seg_fixed)
    cls_fixed = classify(spec, feed_fixed, ratio)

    # block size fix
    if best_bs and (configured_bs is None or path_now is None or configured_bs != best_bs) and (
            hard_error or (path_now is not None and best_rate > path_now * (1 + opts['block_size_tolerance']))):
        fixes['block_size'] = {
            'title': 'Use %s tape blocks' % fmt_bytes(best_bs),
            'setting': _setting(software, 'block_size', best_bs),
            'value': best_bs,
            'why': 'The drive path took %s at %s against %s at %s%s.' % (
                fmt_rate(best_rate), fmt_bytes(best_bs), fmt_rate(path_now),
                fmt_bytes(configured_bs) if configured_bs else 'the current block size',
                ' (limit: %s, %s)' % (fmt_bytes(limit), limit_why) if limit else ''),
            'feed_after_mb_s': _round(feed_with(best_rate, mark_now, segment_mb)),
        }
    # immediate file marks
    if not immediate_now and immediate_possible and mark_fixed < (mark_now or 0) and segment_mb:
        fixes['immediate_filemarks'] = {
            'title': 'Write file marks without waiting (immediate file marks)',
            'setting': _setting(software, 'immediate_filemarks', True),
            'value': True,
            'why': 'A synchronous file mark flushed the drive buffer and lost %.2f s; an immediate one %.2f s. '
                   'Every %.0f MB segment ends with one.' % (mark_now or 0, mark_fixed, segment_mb),
            'feed_after_mb_s': _round(feed_with(path_now, mark_fixed, segment_mb)),
        }
    # segment size / Maximum File Size
    if segment_mb and seg_recommended and segment_mb < seg_recommended:
        fixes['segment_size'] = {
            'title': 'Write larger segments (%.0f MB or more between file marks)' % math.ceil(seg_recommended),
            'setting': _setting(software, 'segment_size', int(math.ceil(seg_recommended))),
            'value': int(math.ceil(seg_recommended)),
            'why': 'With %.2f s lost per file mark, a %.0f MB segment loses %.1f %% of the time at %s; '
                   '%.0f MB keeps the loss under %.0f %%.' % (
                       mark_fixed, segment_mb, 100 * _loss(need_full, segment_mb, mark_fixed), fmt_rate(need_full),
                       math.ceil(seg_recommended), 100 * opts['filemark_loss_target']),
            'feed_after_mb_s': _round(feed_with(path_now, mark_now, seg_recommended)),
        }

    misconfigured = hard_error or _RANK[cls_fixed] > _RANK[cls_now]
    if misconfigured and not hard_error:
        findings.append({'id': 'settings_limit_feed', 'severity': 'error',
                         'text': 'The settings hold the drive back: %s now (%s), %s after the setting fixes (%s).' % (
                             cls_now, fmt_rate(feed_now), cls_fixed, fmt_rate(feed_fixed))})

    # -- streams: from the per-stream rate
    per_stream = src['per_stream_mb_s']
    n_floor = streams_needed(need_floor, per_stream)
    n_full = streams_needed(need_full, per_stream)
    planned = src['streams']
    path_cap = path_fixed
    if cls_fixed != STREAMING:
        if path_cap is not None and path_cap < need_full:
            fixes['drive_path'] = {
                'title': 'Make the host-to-drive path faster',
                'setting': 'HBA, cabling, st driver buffer (see tapeops.qualify.st_tuning)',
                'value': None,
                'why': ('Even at its best block size the drive path took only %s, below the %s floor: '
                        'no number of streams can fix that.' % (fmt_rate(path_cap), fmt_rate(need_floor)))
                if path_cap < need_floor else
                ('Even at its best block size the drive path took only %s, below the %s full speed: '
                 'more streams can at best make the drive speed-match.' % (fmt_rate(path_cap), fmt_rate(need_full))),
                'feed_after_mb_s': None,
            }
        # More streams raise the source feed, up to what the drive path carries.
        ceiling = need_full if path_cap is None else min(need_full, path_cap)
        source_limits = sustained < ceiling and (path_cap is None or path_cap >= need_floor)
        target = ceiling
        n_target = streams_needed(ceiling, per_stream)
        if n_target is not None and n_target > opts['max_streams']:
            target, n_target = need_floor, n_floor
        if source_limits and n_target is not None and n_target <= opts['max_streams'] and n_target > src['streams']:
            planned = n_target
            fixes['streams'] = {
                'title': 'Run %d parallel streams into this drive' % n_target,
                'setting': _setting(software, 'streams', n_target),
                'value': n_target,
                'why': 'Each stream reads about %s (%s sustained over %d stream%s); %d streams give %s, '
                       '%s the %s %s.' % (
                           fmt_rate(per_stream), fmt_rate(sustained), src['streams'],
                           '' if src['streams'] == 1 else 's', n_target, fmt_rate(per_stream * n_target),
                           'reaching' if target >= ceiling else 'above', fmt_rate(target),
                           'for full speed' if target == need_full else
                           ('floor' if target == need_floor else 'the drive path carries')),
                'feed_after_mb_s': _round(min(ceiling, per_stream * n_target)),
            }
        elif source_limits and sustained < need_floor and (n_floor is None or n_floor > opts['max_streams']):
            fixes['staging'] = {
                'title': 'Stage to disk first, then copy to tape',
                'setting': _setting(software, 'staging', None),
                'value': None,
                'why': 'At %s per stream even %d streams reach only %s, short of the %s floor; a disk '
                       'stage that reads sequentially at %s or more feeds the drive instead.' % (
                           fmt_rate(per_stream), opts['max_streams'],
                           fmt_rate((per_stream or 0) * opts['max_streams']), fmt_rate(need_floor),
                           fmt_rate(need_full)),
                'feed_after_mb_s': None,
            }

    # -- memory
    mem_need = memory_needed_mb(planned + int(other_streams or 0), opts['memory_base_mb'],
                                opts['memory_per_stream_mb'])
    mem_total = _num(memory_total_mb)
    if mem_total is not None and mem_total < mem_need:
        fixes['memory'] = {
            'title': 'Give the host at least %d MB of RAM' % mem_need,
            'setting': 'RAM',
            'value': mem_need,
            'why': '%d MB base + %d MB x %d interleaved stream%s = %d MB; the host has %d MB.' % (
                opts['memory_base_mb'], opts['memory_per_stream_mb'], planned + int(other_streams or 0),
                '' if planned + int(other_streams or 0) == 1 else 's', mem_need, mem_total),
            'feed_after_mb_s': None,
        }

    cls = MISCONFIGURED if misconfigured else cls_now
    reasons.append('Feed at the current settings: %s, limited by %s -> %s.' % (
        fmt_rate(feed_now), limiter, _class_words(cls_now, feed_now, need_floor, need_full)))
    if misconfigured and not hard_error:
        reasons.append('With the setting fixes the feed would be %s -> %s.' % (
            fmt_rate(feed_fixed), _class_words(cls_fixed, feed_fixed, need_floor, need_full)))

    ranked = []
    order = FIX_ORDER if 'streams' in fixes else tuple(k for k in FIX_ORDER if k != 'memory') + ('memory',)
    for key in order:
        if key in fixes:
            item = dict(fixes[key])
            item['id'] = key
            item['rank'] = len(ranked) + 1
            ranked.append(item)

    return {
        'class': cls,
        'class_at_current_settings': cls_now,
        'class_after_setting_fixes': cls_fixed,
        'would_shoe_shine': cls_now == SHOE_SHINING,
        'what_if': bool(what_if),
        'drive_label': label,
        'summary': _summary(cls, label, feed_now, need_floor, need_full, ranked),
        'numbers': {
            'source_mean_mb_s': _round(src['mean_mb_s']),
            'source_sustained_mb_s': _round(sustained),
            'source_sustained_basis': src['sustained_basis'],
            'source_min_mb_s': _round(src['min_mb_s']),
            'streams_measured': src['streams'],
            'per_stream_mb_s': _round(per_stream),
            'tape_ratio': round(ratio, 3),
            'tape_ratio_basis': ratio_basis,
            'native_mb_s': native,
            'speed_floor_mb_s': floor,
            'floor_known': needs['floor_known'],
            'need_full_mb_s': _round(need_full),
            'need_floor_mb_s': _round(need_floor),
            'drive_path_mb_s': _round(path_now),
            'drive_path_best_mb_s': _round(best_rate),
            'block_size_bytes': configured_bs,
            'best_block_size_bytes': best_bs,
            'block_size_limit_bytes': limit,
            'filemark_seconds_sync': costs.get('sync'),
            'filemark_seconds_immediate': costs.get('immediate'),
            'segment_size_mb': segment_mb,
            'feed_now_mb_s': _round(feed_now),
            'feed_after_setting_fixes_mb_s': _round(feed_fixed),
            'streams_needed_floor': n_floor,
            'streams_needed_full': n_full,
            'memory_needed_mb': mem_need,
            'memory_total_mb': mem_total,
        },
        'reasons': reasons,
        'findings': findings,
        'fixes': ranked,
    }


def evaluate_host(drives, source, config=None, memory_total_mb=None, options=None, what_if=False):
    """Verdicts for every drive of one host; the memory rule counts the streams of all drives.

    ``drives``: list of {'spec': DriveSpec, 'drive': tape_drive_info entry, 'tape': tape_write_benchmark
    result or None, 'config': per-drive settings overriding ``config``}.
    """
    first = []
    for item in drives:
        cfg = dict(config or {})
        cfg.update(item.get('config') or {})
        first.append(evaluate(item['spec'], source, item.get('tape'), item.get('drive'), cfg, None, 0,
                              options, what_if))
    planned = [_planned_streams(v) for v in first]
    result = []
    for index, item in enumerate(drives):
        cfg = dict(config or {})
        cfg.update(item.get('config') or {})
        others = sum(planned) - planned[index]
        result.append(evaluate(item['spec'], source, item.get('tape'), item.get('drive'), cfg, memory_total_mb,
                               others, options, what_if))
    return result


def worst(classes):
    """The worst class of a list (for a host or a fleet line)."""
    order = (MISCONFIGURED, SHOE_SHINING, SPEED_MATCHED, STREAMING)
    for cls in order:
        if cls in classes:
            return cls
    return None


# ---------------------------------------------------------------------------
# wording


def _planned_streams(verdict):
    for fix in verdict['fixes']:
        if fix['id'] == 'streams':
            return fix['value']
    return verdict['numbers']['streams_measured']


def _round(value, digits=1):
    value = _num(value)
    return None if value is None else round(value, digits)


def _loss(rate, segment_mb, lost):
    if not rate or not segment_mb or not lost:
        return 0.0
    return lost / (segment_mb / rate + lost)


def _class_words(cls, feed, need_floor, need_full):
    if cls == STREAMING:
        return 'STREAMING (%s >= %s full speed)' % (fmt_rate(feed), fmt_rate(need_full))
    if cls == SPEED_MATCHED:
        return 'SPEED-MATCHED (%s between the %s floor and %s full speed: the drive slows down but keeps ' \
               'moving)' % (fmt_rate(feed), fmt_rate(need_floor), fmt_rate(need_full))
    return 'SHOE-SHINING (%s below the %s floor: the drive stops, rewinds and restarts)' % (
        fmt_rate(feed), fmt_rate(need_floor))


def _summary(cls, label, feed, need_floor, need_full, fixes):
    head = {
        STREAMING: '%s streams: the feed (%s) reaches full speed (%s).' % (label, fmt_rate(feed), fmt_rate(need_full)),
        SPEED_MATCHED: '%s speed-matches: %s is below full speed (%s) but above the floor (%s).' % (
            label, fmt_rate(feed), fmt_rate(need_full), fmt_rate(need_floor)),
        SHOE_SHINING: '%s would shoe-shine: %s is below the %s floor.' % (label, fmt_rate(feed), fmt_rate(need_floor)),
        MISCONFIGURED: '%s is held back by its settings (feed %s now; floor %s, full speed %s).' % (
            label, fmt_rate(feed), fmt_rate(need_floor), fmt_rate(need_full)),
    }[cls]
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
