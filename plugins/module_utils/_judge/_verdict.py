# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verdict: can the sources keep a tape drive streaming, and what must change.

Private to this collection: may change without notice. Pure functions on the
results of ``source_read_benchmark``, ``tape_drive_info`` and
``tape_write_benchmark`` plus the backup software's settings. This is the ONE
place a verdict is computed: the qualify and upgrade_check playbooks (through
the ``qualify_verdict`` action), the reports and the tests all call it.

The verdict is decided here as data: the class, the numbers, the forecasts,
and the facts (reasons), findings and fixes each as an id with the numbers
behind it. No sentence is written here: ``_words`` turns a decision into the
summary, reasons, finding texts and fix titles the host document, Markdown,
HTML and JUnit show (``_host`` has it word each one as it assembles the
document).

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

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs

# the classes (the records name them: every report reads them without the judge)
STREAMING = _records.STREAMING
SPEED_MATCHED = _records.SPEED_MATCHED
SHOE_SHINING = _records.SHOE_SHINING
INCONCLUSIVE = _records.INCONCLUSIVE
MISCONFIGURED = _records.MISCONFIGURED
CLASSES = _records.CLASSES

_RANK = _forecast.RANK

# The order fixes are listed in: settings that cost nothing first, then more
# streams (and the memory they need), then infrastructure.
FIX_ORDER = ('block_size', 'st_direct_io', 'immediate_filemarks', 'segment_size', 'job_size', 'streams', 'memory',
             'drive_path', 'staging')
# Without a streams fix, the memory rule is the last thing to do: it only matters once more
# streams run.
FIX_ORDER_NO_STREAMS = ('block_size', 'st_direct_io', 'immediate_filemarks', 'segment_size', 'job_size', 'drive_path',
                        'staging', 'memory')

# A drive's health fixes (``_judge._health``'s fix ids, each as ``health_<fix>``): where the sweep ran slower
# than the drive's model and the drive has health findings, health is the likely cause, and its fixes (clean the
# drive, retire the cartridge, call service ...) rank before every fix of FIX_ORDER, worst finding's first.
HEALTH_FIX = 'health_'

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
    # btape's rate (Bacula/Bareos) and the sweep's at its block size differ by more than this (% of the
    # sweep's): a btape_disagrees finding. An estimate (no published figure): well above the sweep's
    # run-to-run noise of a few per cent (block_size_tolerance).
    'btape_disagree_pct': 15.0,
    # Replay each stretch of the sources' stream at its own tape ratio (ratio_profile, docs/verdict.md "The ratio
    # along the stream"), where the compressibility sample's windows differ. False: one ratio for the whole stream.
    'ratio_profile': True,
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

# The backup software a verdict knows the settings of (tapeops_backup.software). Any other (unset, or an
# application this collection does not know) is judged as "not known": the verdict offers none of the
# application's own settings (APPLICATION_FIXES) and says so (the application_unknown fact).
SOFTWARE = ('data_protector', 'bacula', 'bareos', 'netbackup', 'amanda')
# The fixes that are the backup application's own settings, with no setting of the st driver or the host behind
# them: offered and modelled only for an application of SOFTWARE, whose setting the verdict can name. Only the
# application writes file marks: MTWEOFI is an ioctl its writer calls (st has no option that makes a mark
# immediate), and how much it writes between two marks is its own (Data Protector's segment size, Bacula's Maximum
# File Size ...). The block size is not among them: the st driver carries it (tapeops.qualify.st_tuning checks each
# drive's HBA path for it and keeps st in variable-block mode; in fixed-block mode it is st's own, mt defblksize),
# so it is offered whatever the application, in the st driver's words where the application is not known.
APPLICATION_FIXES = ('immediate_filemarks', 'segment_size')
# The backup software that writes only synchronous file marks: no setting makes it write immediate ones, so the
# verdict neither models them nor offers the immediate_filemarks fix. Bacula and Bareos end each file with the st
# driver's MTWEOF; NetBackup's bptm has no documented setting for immediate tape marks; Amanda's tape device
# writes every file mark with MTWEOF (device-src/tape-device.c, tape_weof), and has no property for another.
NO_IMMEDIATE_MARKS = ('bacula', 'bareos', 'netbackup', 'amanda')
# The backup software that writes one backup at a time to a drive (no multiplexing): more streams into the drive
# is no fix for it, a disk stage is. Amanda's taper writes one dump to a volume at a time (taper-parallel-write
# spreads dumps over several drives, amanda.conf(5)); its holding disk is the stage.
NO_MULTIPLEXING = ('amanda',)
# The backup software that ends every backup with a synchronous file mark and has no default segment: how often
# it marks is the size of its backups, which the verdict does not know without job_size_mb (a dump: each one a
# job whose closing mark every forecast models) or segment_size_mb (part-size); the segment_per_backup fact says
# so. Amanda ends every dump, or every part of one (tapetype part-size, 0 by default: no splitting), with a file
# mark (device-src/tape-device.c, tape_device_finish_file).
MARK_PER_BACKUP = ('amanda',)
# The block size a backup software writes when the inventory gives none, and where that is documented
# (numbers.block_size_basis 'default'): Amanda's tapetype blocksize, "Default: 32 kbytes" (amanda.conf(5)), the
# tape device's block_size 32768 (device-src/tape-device.c).
DEFAULT_BLOCK_BYTES = {'amanda': 32768}
DEFAULT_BLOCK_BASIS = {
    'amanda': 'amanda.conf(5), tapetype blocksize: "Default: 32 kbytes" (the tape device\'s block size 32768, '
              'Amanda device-src/tape-device.c)',
}

# The segment size a backup software writes a synchronous file mark after when the inventory gives none
# (tapeops_backup / tapeops_drives segment_size_mb). The verdict models it and says it is the default.
# - Data Protector: 2000 MB for LTO devices (seed 001: HP LTO-4 FH SAS, Data Protector A.09.07).
# - Bacula and Bareos: Maximum File Size, 1000000000 bytes (1000 MB) when the Device resource does not set
#   it: Bacula src/stored/stored_conf.c, dev_items {"maximumfilesize", store_size64,
#   ITEM(res_dev.max_file_size), 0, ITEM_DEFAULT, 1000000000}; Bareos core/src/stored/stored_conf.cc,
#   {"MaximumFileSize", CFG_TYPE_SIZE64, ITEM(res_dev.max_file_size), 0, CFG_ITEM_DEFAULT, "1000000000"}.
#   The storage daemon ends each such file with a synchronous mark (the st driver's MTWEOF: neither has
#   immediate marks), so the default is a mark every 1000 MB.
# - NetBackup: a tape mark ends every fragment of an image ("NetBackup will write a tape mark every 'fragment
#   size'": Veritas article 100004712), and a Media Manager (tape) storage unit's Maximum Fragment Size is 1 TB,
#   1048576 megabytes, by default (NetBackup System Administrator's Help, "Maximum Fragment Size"): 1048576 x
#   1048576 bytes, 1099511.627776 decimal MB. It is set on the storage unit (the primary server), not on the
#   media server; a mark also ends each backup image.
DEFAULT_SEGMENT_MB = {'data_protector': 2000.0, 'bacula': 1000.0, 'bareos': 1000.0, 'netbackup': 1099511.627776}
# Where each of them is documented (the host document's setting_sources cite it)
DEFAULT_SEGMENT_BASIS = {
    'data_protector': 'Data Protector segment size for LTO devices, 2000 MB (seed 001, Data Protector A.09.07)',
    'bacula': 'Bacula src/stored/stored_conf.c (dev_items): MaximumFileSize ITEM_DEFAULT 1000000000',
    'bareos': 'Bareos core/src/stored/stored_conf.cc (dev_items): MaximumFileSize default "1000000000"',
    'netbackup': 'NetBackup System Administrator\'s Help, "Maximum Fragment Size": 1 TB (1048576 megabytes) for a '
                 'Media Manager storage unit; a tape mark ends every fragment (Veritas article 100004712)',
}


class VerdictInputError(TapeopsError, ValueError):
    """The inputs cannot give a verdict; the message says what to do."""


# ---------------------------------------------------------------------------
# small helpers


def _get(obj, key, default=None):
    """Read ``key`` from a mapping or an object (a DriveSpec, or a record: _host hands the verdict records)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def memory_needed_mb(streams, base_mb=DEFAULTS['memory_base_mb'], per_stream_mb=DEFAULTS['memory_per_stream_mb']):
    """The memory rule: 512 MB base plus 512 MB per interleaved disk agent."""
    return int(base_mb + per_stream_mb * max(0, int(streams)))


def segment_for_loss(feed_mb_s, seconds_per_mark, loss):
    """Smallest segment (MB) whose file mark costs at most ``loss`` of the time."""
    feed = _records.finite(feed_mb_s)
    lost = _records.finite(seconds_per_mark)
    if feed is None or feed <= 0 or lost is None or lost <= 0:
        return None
    # time writing S/feed, time lost t: t / (S/feed + t) <= loss  =>  S >= feed * t * (1-loss)/loss
    return feed * lost * (1.0 - loss) / loss


def _hundreds_up(mb):
    """A recommended size, up to the next 100 MB."""
    return float(int(math.ceil(mb / 100.0)) * 100)


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
    ratio = _records.finite(head)
    return ratio if ratio and ratio >= 1 else 1.0


# ---------------------------------------------------------------------------
# inputs


def source_numbers(source, spec=None):
    """The feed the sources give: the per-second series and its figures, streams, passes.

    The figures obey sustained (5th percentile) <= mean <= max, whatever the
    module reported: a one-sample series cannot have a 5th percentile above
    its mean. ``inconclusive`` is the source module's reason (a sentence), or
    ``_forecast.too_little_data``'s shortfall (data: _words says it) for the
    drive ``spec`` (its buffer), or None.
    """
    agg = _get(source, 'aggregate') or {}
    streams = _get(source, 'streams') or []
    series = [x for x in (_records.finite(v) for v in (agg.get('series_mb_s') or [])) if x is not None and x >= 0]
    mean = _records.finite(agg.get('mean_mb_s'))
    p5 = _records.finite(agg.get('p5_mb_s'))
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
    count = int(_records.finite(count) or len(streams) or 1)
    samples = int(_records.finite(agg.get('samples')) or len(series))
    return {
        'mean_mb_s': mean,
        'sustained_mb_s': sustained,
        'sustained_basis': 'p5' if p5 is not None else 'mean',
        'min_mb_s': _records.finite(agg.get('min_mb_s')) if not series else min(series),
        'max_mb_s': maximum,
        'series': series,
        'samples': samples,
        'passes': _records.finite(_get(source, 'passes')),
        'streams': count,
        'per_stream_mb_s': mean / count,
        'inconclusive': _inconclusive(source, spec, agg, streams, samples, bool(series)),
        'scaling': _scaling_curve(source),
    }


def _inconclusive(source, spec, agg, streams, samples, has_series):
    """Why the source read is too little to judge: the source module's reason (a sentence), else the verdict's
    one rule (``_forecast.too_little_data``'s shortfall, as data) for the drive ``spec``, or None.

    ``samples``: the read's per-second samples; ``has_series``: whether it has a series of them (without one, the
    samples are not judged).
    """
    inconclusive = _get(source, 'inconclusive')
    if isinstance(inconclusive, dict) and inconclusive.get('reason'):
        return str(inconclusive['reason'])
    if inconclusive and not isinstance(inconclusive, dict):
        return str(inconclusive)
    duration = _records.finite(agg.get('duration_s')) or _records.finite(_get(source, 'seconds')) or float(samples or 0)
    # The source module marks a read too short for its own min_samples (with which budget to raise); whatever
    # it says, too little data for the verdict's one rule is INCONCLUSIVE too (docs/verdict.md).
    return _forecast.too_little_data(
        samples=samples if has_series else None, bytes_read=_records.finite(agg.get('bytes')), source_bytes=_source_bytes(streams),
        files=_source_files(streams, agg), seconds=duration,
        buffer_mb=_records.finite(_get(spec, 'buffer_mb')) if spec is not None else None)


def _source_bytes(streams):
    """The sources' data (every stream's tree, read or not), or None when a stream does not say."""
    sizes = [_records.finite(_get(s, 'tree_bytes')) for s in streams if isinstance(s, dict)]
    return sum(sizes) if sizes and None not in sizes else None


def _source_files(streams, agg):
    """The sources' files with data (every stream's tree), else the files read, or None."""
    files = [_records.finite(_get(s, 'tree_files')) for s in streams if isinstance(s, dict)]
    if files and None not in files:
        return int(sum(files))
    return int(_records.finite(agg.get('files'))) if _records.finite(agg.get('files')) is not None else None


def _scaling_curve(source):
    """[(streams, mean MB/s)] measured by the source test (sorted), or []."""
    points = {}
    for row in _get(source, 'scaling') or []:
        if not isinstance(row, dict):
            continue
        streams = _records.finite(row.get('streams'))
        mean = _records.finite(row.get('mean_mb_s'))
        if streams and streams >= 1 and mean is not None and mean >= 0:
            points[int(streams)] = mean
    return sorted(points.items())


def feed_at_streams(src, streams):
    """(aggregate MB/s at ``streams``, basis) from the measured scaling curve; ``_words.basis`` words the basis.

    Interpolated between measured steps; past the largest one it is held flat
    (no gain assumed) and the basis says so. Without a curve, streams scale the
    measured per-stream rate linearly, and the basis says that is an assumption.
    """
    curve = src['scaling']
    if not curve:
        return src['per_stream_mb_s'] * streams, {'id': 'streams_linear', 'streams': streams,
                                                  'per_stream_mb_s': src['per_stream_mb_s']}
    if streams <= curve[0][0]:
        first_n, first = curve[0]
        return first * streams / first_n, {'id': 'streams_first_step', 'streams': first_n, 'mb_s': first}
    for (n0, r0), (n1, r1) in zip(curve, curve[1:]):
        if n0 <= streams <= n1:
            value = r0 + (r1 - r0) * (streams - n0) / float(n1 - n0)
            return value, {'id': 'streams_curve', 'at_step': streams in (n0, n1), 'lower': n0, 'upper': n1}
    last_n, last = curve[-1]
    return last, {'id': 'streams_beyond_curve', 'streams': last_n, 'mb_s': last}


def tape_ratio(spec, source=None, override=None, observed=None, tape=None):
    """(ratio, basis): the compression ratio the drive will get on this data (``_words.basis`` words the basis).

    The one rule, first found: the user's ``override`` (``tape_ratio``), the ratio the drive measured itself
    over an observed job (``observed``: ``_observed.drive_ratio``'s ``ratio_observed`` basis; its
    ``ratio_observed_unused`` counts as none), an estimate from the sources' compressibility sample (capped at
    the drive's nominal ratio; mapped by this drive's own compressor where the write test's compression probe
    measured it, ``tape``: :func:`probe_calibration`), the drive's nominal ratio.
    """
    value = _records.finite(override)
    if value is not None:
        if value < 1:
            raise VerdictInputError('tape_ratio must be >= 1.0 (data on tape / data written), got %s.' % override)
        return value, {'id': 'ratio_set'}
    measured = _records.finite((observed or {}).get('ratio')) if (observed or {}).get('id') == 'ratio_observed' \
        else None
    sampled = _sampled_ratio(spec, source, probe_calibration(tape))
    if measured is not None and measured >= 1:
        # the estimate it replaces is said beside it (issue 25: the report shows both)
        return measured, dict(observed, **({'sampled': sampled[0]} if sampled else {}))
    if sampled:
        return sampled
    nominal = _records.finite(_get(spec, 'compression_ratio')) or 1.0
    return nominal, {'id': 'ratio_nominal'}


def _sampled_ratio(spec, source, calibration=None):
    """(ratio, basis) estimated from the sources' compressibility sample (capped at the drive's nominal ratio), or
    None without a sample. With ``calibration`` (:func:`probe_calibration`) the sample is mapped by this drive's
    own compressor, and the default model's estimate is kept beside it (``default_estimate``)."""
    comp = _get(source, 'compressibility') or {}
    software_ratio = _records.finite(comp.get('ratio'))
    if software_ratio is None or software_ratio <= 0:
        return None
    # The drive's compressor is not assumed to beat its nominal rating.
    cap = max(1.0, _records.finite(_get(spec, 'compression_ratio')) or 1.0)
    estimate = _records.finite(_drive_model.tape_ratio_from_software(software_ratio, max_ratio=cap))
    if estimate is None:
        return None
    basis = {'id': 'ratio_sampled', 'sample_bytes': _records.finite(comp.get('sample_bytes')),
             'compressor': comp.get('compressor'), 'ratio': software_ratio}
    if calibration:
        default = max(1.0, estimate)
        estimate = _records.finite(_drive_model.tape_ratio_from_software(
            software_ratio, a=calibration['a'], b=calibration['b'], max_ratio=cap))
        basis.update(calibration=calibration, default_estimate=round(default, 4))
    return max(1.0, estimate), basis


def ratio_profile(source, ratio, tape=None):
    """The tape ratio along the sources' stream, for ``_forecast.forecast``'s ``ratio_profile``: ``{'ratios',
    'stream_mb'}``, or None (no windowed sample, or one whose windows all lie within 5 % of each other).

    Each window of the compressibility sample (``compressibility.profile``: evenly spaced over the stream's bytes,
    in the order a backup reads the files) is mapped to a tape ratio as the whole sample is (the drive's own line
    where the write test's probe measured it, else the default model), then all are scaled so that the stream's
    ratio (host bytes over tape bytes: their harmonic mean) is ``ratio``, the verdict's tape ratio whatever its
    basis. A window is not capped at the drive's nominal ratio: a drive compresses a run of repeated data far
    beyond it (only its host rate is capped, ``compressed_max_mb_s``), and a window the sample could not read takes
    the stream's ratio.
    """
    comp = _get(source, 'compressibility') or {}
    prof = comp.get('profile') if isinstance(comp, dict) else None
    if not isinstance(prof, dict) or not isinstance(prof.get('ratios'), list):
        return None
    soft = [_records.finite(r) for r in prof['ratios']]
    known = [r for r in soft if r is not None and r > 0]
    stream_mb = (_records.finite(prof.get('stream_bytes')) or 0.0) / 1e6
    if len(known) < 2 or stream_mb <= 0 or max(known) <= min(known) * 1.05:
        return None
    cal = probe_calibration(tape) or {'a': _drive_model.DEFAULT_RATIO_A, 'b': _drive_model.DEFAULT_RATIO_B}
    mapped = [max(1.0, cal['a'] + cal['b'] * r) if r is not None and r > 0 else None for r in soft]
    present = [r for r in mapped if r is not None]

    def stream_ratio(scale):
        return len(present) / sum(1.0 / max(1.0, r * scale) for r in present)
    # the scale that gives the stream ``ratio``, no window below 1:1 (the stream's ratio grows with the scale)
    high = 1.0
    while stream_ratio(high) < ratio and high < 1e6:
        high *= 2.0
    scale = _records.bisect(lambda x: stream_ratio(x) < ratio, 0.0, high)
    return {'ratios': [round(max(1.0, r * scale), 4) if r is not None else round(ratio, 4) for r in mapped],
            'stream_mb': round(stream_mb, 3)}


def probe_calibration(tape):
    """This drive's own map from the sources' software ratio to its tape ratio, from the write test's compression
    probe (``tape``: the drive's write sweep; ``_measure/_tape_compression``): ``{'a', 'b', 'points': [[pattern,
    software ratio, drive ratio], ...]}`` fitted to the patterns whose drive ratio is known, or None (no probe, or
    fewer than two patterns of different software ratios measured). Only a sweep that ran to its end counts."""
    sweep = tape if isinstance(tape, _records.WriteSweep) else _records.WriteSweep.from_result(tape)
    if sweep is None or not sweep.written or not isinstance(sweep.compression_probe, dict):
        return None
    points = []
    for row in sweep.compression_probe.get('patterns') or []:
        if not isinstance(row, dict) or row.get('why_unknown') or row.get('error'):
            continue
        soft = _records.finite(row.get('software_ratio'))
        drive = _records.finite((row.get('drive') or {}).get('ratio') if isinstance(row.get('drive'), dict) else None)
        if soft and drive and soft > 0 and drive > 0:
            points.append([str(row.get('pattern')), soft, drive])
    if len(set(p[1] for p in points)) < 2:
        return None
    a, b = _drive_model.fit_tape_ratio_model([(p[1], p[2]) for p in points])
    return {'a': round(a, 4), 'b': round(b, 4), 'points': points}


def ratio_unused(observed, basis, ratio):
    """Why the drive's observed ratio (``observed``, ``_observed.drive_ratio``'s) is not the ratio used, as the
    data of the ``ratio_observed_unused`` fact; None when it is used or none was asked for.

    ``basis`` and ``ratio``: ``tape_ratio``'s. The observe run's own reason, or ``tape_ratio_set`` when the
    drive measured one and the user's ``tape_ratio`` came first.
    """
    if not observed or basis.get('id') == 'ratio_observed':
        return None
    if observed.get('id') == 'ratio_observed':
        return {'id': 'ratio_observed_unused', 'why': 'tape_ratio_set', 'run': observed.get('run'),
                'jobid': observed.get('jobid'), 'measured': observed.get('ratio'), 'tape_ratio': ratio}
    return dict(observed)


def sweep_rates(tape, ratio):
    """({block_size: mb_s}, pattern ratio) from the write sweep, for the pattern closest to the data's ratio."""
    sweep = _get(tape, 'sweep') or []
    by_pattern = {}
    for row in sweep:
        if not isinstance(row, dict) or row.get('error') or _records.finite(row.get('mb_s')) is None or not row.get('block_size'):
            continue
        pattern_ratio = _pattern_ratio(row.get('pattern'))
        if pattern_ratio is None:
            continue
        by_pattern.setdefault(pattern_ratio, {})[int(row['block_size'])] = _records.finite(row['mb_s'])
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
        'mb_s': _records.finite(rb.get('mb_s')),
        'write_mb_s': _records.finite(rb.get('write_mb_s')),
        'bytes': int(_records.finite(rb.get('bytes')) or 0),
        'verified': verified if isinstance(verified, bool) else None,
        'mismatched_blocks': int(_records.finite(rb.get('mismatched_blocks')) or 0),
        'error': rb.get('error'),
        'read_size': _records.finite(rb.get('block_size')),
        'verification': rb.get('verification'),
    }


# path_rate's bases of a rate that was modelled, not measured, at the size asked for
PATH_NOT_MEASURED = ('path_above_largest', 'path_scaled_from_one', 'path_fitted')


def path_rate(rates, block_size):
    """(MB/s, basis) of the drive path at ``block_size``: measured, or modelled with a stated basis.

    The basis is data (``_words.basis`` words it); its id is in PATH_NOT_MEASURED
    when the rate at ``block_size`` is modelled, not measured.

    Between and below measured sizes the rate follows a per-command cost fitted
    to the two nearest measured sizes (time per byte = 1/R + c/block); above the
    largest measured size no gain is assumed. A size the sweep did not measure
    never gets the sweep's best rate.
    """
    if not rates:
        return None, None
    if not block_size:
        size = max(rates, key=lambda s: (rates[s], -s))
        return rates[size], {'id': 'path_best', 'block_size': size}
    if block_size in rates:
        return rates[block_size], {'id': 'path_measured'}
    sizes = sorted(rates)
    if block_size > sizes[-1]:
        return rates[sizes[-1]], {'id': 'path_above_largest', 'block_size': sizes[-1]}
    if block_size < sizes[0]:
        pair = sizes[:2]
        how = {'id': 'extrapolated', 'smallest': sizes[0]}
    else:
        upper = next(s for s in sizes if s > block_size)
        lower = max(s for s in sizes if s < block_size)
        pair = [lower, upper]
        how = {'id': 'interpolated', 'lower': lower, 'upper': upper}
    if len(pair) < 2:
        # one measured size: scale by block size, the per-command cost taking all the time (cautious)
        value = rates[pair[0]] * min(1.0, block_size / float(pair[0]))
        return value, {'id': 'path_scaled_from_one', 'how': how}
    (b0, b1), (r0, r1) = pair, (rates[pair[0]], rates[pair[1]])
    per_byte = (1.0 / r0 - 1.0 / r1) / (1.0 / b0 - 1.0 / b1) if r0 > 0 and r1 > 0 else None
    if per_byte is None or per_byte <= 0:
        value = min(r0, r1) if block_size < b1 else r1
    else:
        base = 1.0 / r1 - per_byte / b1
        value = 1.0 / (base + per_byte / block_size) if base + per_byte / block_size > 0 else min(r0, r1)
    value = max(0.0, min(value, max(r0, r1)))
    return value, {'id': 'path_fitted', 'how': how}


# btape's tests in the order one is taken: random data (the drive cannot compress it: the sweep's incompressible
# pattern is its match) in the storage daemon's block structure (what a backup writes) first
_BTAPE_ORDER = (('random', 'block'), ('random', 'raw'), ('zero', 'block'), ('zero', 'raw'))


def btape_against_sweep(btape, tape, buffer_mb=None):
    """btape's rate (the storage daemon's writer) against the sweep's drive path at btape's block size, as data.

    Returns None when btape finished no test with a rate; else ``{data, structure, block_size, btape_mb_s,
    errors, sweep_mb_s, sweep_basis, delta_pct, why}``: ``delta_pct`` is btape's rate against the sweep's in % of
    the sweep's, ``why`` says why there is none (``zero_data``: zeros compress in the drive, no sweep pattern is
    their match; ``no_block_size``: btape's output named none; ``no_sweep``: no incompressible sweep). Where the sweep's steps are no larger than twice the
    drive's buffer (``buffer_mb``), ``step_mb`` says so: such a step measures the host as much as the drive.
    """
    tests = [test for test in (_get(btape, 'tests') or []) if isinstance(test, dict)
             and _records.finite(test.get('total_rate_mb_s')) is not None]
    if not tests:
        return None
    order = dict((key, index) for index, key in enumerate(_BTAPE_ORDER))
    test = min(tests, key=lambda item: order.get((item.get('data'), item.get('structure')), len(order)))
    block = _records.finite(test.get('block_size'))
    out = {'data': test.get('data'), 'structure': test.get('structure'), 'block_size': int(block) if block else None,
           'btape_mb_s': _records.finite(test['total_rate_mb_s']),
           'errors': [str(e) for e in test['errors']][:3] if isinstance(test.get('errors'), list) else [],
           'sweep_mb_s': None, 'sweep_basis': None, 'delta_pct': None, 'why': None}
    if test.get('data') != 'random':
        out['why'] = 'zero_data'
        return out
    if not out['block_size']:
        out['why'] = 'no_block_size'
        return out
    rates, pattern = sweep_rates(tape, 1.0)
    if not rates or pattern != 1.0:
        out['why'] = 'no_sweep'
        return out
    sweep_mb_s, basis = path_rate(rates, out['block_size'])
    if not sweep_mb_s:
        out['why'] = 'no_sweep'
        return out
    out.update(sweep_mb_s=sweep_mb_s, sweep_basis=basis,
               delta_pct=(out['btape_mb_s'] - sweep_mb_s) / sweep_mb_s * 100.0)
    step = _records.finite(((_get(tape, 'plan') or {}).get('step_bytes')))
    if step and buffer_mb and step / 1e6 <= 2.0 * buffer_mb:
        out.update(step_mb=step / 1e6, buffer_mb=buffer_mb)
    return out


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
    """seconds lost per mark for 'sync' and 'immediate' (worst segment measured).

    ``tape``'s file-mark runs are ``_records.FilemarkCost`` records (or their dicts).
    """
    costs = {}
    for row in _get(tape, 'filemarks') or []:
        if not isinstance(row, (dict, _records.FilemarkCost)):
            continue
        kind = _get(row, 'kind')
        lost = _records.finite(_get(row, 'seconds_lost_per_mark'))
        if kind in ('sync', 'immediate') and lost is not None:
            costs[kind] = max(costs.get(kind, 0.0), 0.0, lost)
    return costs


def _block_limit(drive):
    """(bytes, 'drive' / 'hba') of the largest block the drive (READ BLOCK LIMITS) and HBA take, or (None, None)."""
    limits = []
    block_limits = _get(drive, 'block_limits') or {}
    maximum = _records.finite(block_limits.get('max') if isinstance(block_limits, dict) else None)
    if maximum:
        limits.append((int(maximum), 'drive'))
    hba = _records.finite(_get(drive, 'hba_max_transfer_bytes'))
    if hba:
        limits.append((int(hba), 'hba'))
    if not limits:
        return None, None
    return min(limits)


def st_direct_io(drive, block):
    """What st's max_sg_segs must be for ``block`` to go by direct I/O, as data, or None.

    st maps the application's buffer page by page into one command, at most min(st max_sg_segs, the HBA's
    sg_tablesize) pages (``direct_io_max_bytes`` of st_preflight_info); a larger block is copied through st's
    own driver buffer (``_stinit.transfer_limits``). Only where st's max_sg_segs is the smaller of the two,
    the HBA takes the block's pages and its maximum transfer the block, and st tries direct I/O at all, does
    raising max_sg_segs lift that: to the block's pages plus one, for a buffer that does not start on a page
    (the preflight's own advice). ``drive``: the drive entry with the st preflight's ``host_sg_tablesize``,
    ``direct_io_max_bytes``, ``hba_max_transfer_bytes``, ``st_max_sg_segs`` and ``st_try_direct_io``.
    """
    segs, table = _records.finite(_get(drive, 'st_max_sg_segs')), _records.finite(_get(drive, 'host_sg_tablesize'))
    direct, hba = _records.finite(_get(drive, 'direct_io_max_bytes')), _records.finite(_get(drive, 'hba_max_transfer_bytes'))
    if not (block and segs and table and direct) or _get(drive, 'st_try_direct_io') is False:
        return None
    if block <= direct or segs >= table or (hba and block > hba):
        return None
    page = int(direct) // int(segs)
    pages = -(-int(block) // page)
    if pages > table:
        return None
    return {'max_sg_segs': pages + 1, 'block_size': int(block), 'now_max_sg_segs': int(segs),
            'sg_tablesize': int(table), 'page_size': page, 'direct_io_max_bytes': int(direct)}


def without_physics(drive):
    """True when the drive's inventory entry says it has no tape physics (tapeops_drives ``physics: false``).

    An emulator such as mhvtl writes at the speed of memory and disk: no buffer, no speed matching, no
    back-hitch. The resolver carries the entry's ``physics`` in the identity's ``inventory``.
    """
    identity = _get(drive, 'generation')
    inventory = identity.get('inventory') if isinstance(identity, dict) else None
    return isinstance(inventory, dict) and inventory.get('physics') is False


def drive_link(drive):
    """(usable MB/s or None, link dict or None) of the drive's HBA link (tape_drive_info / st_preflight_info
    ``drives[].link``, from ``_hba_link``): SAS negotiated link rate or FC port speed after line encoding."""
    link = _get(drive, 'link')
    if not isinstance(link, dict):
        return None, None
    usable = _records.finite(link.get('usable_mb_s'))
    return (usable if usable is not None and usable > 0 else None), link


# ---------------------------------------------------------------------------
# the verdict


class _Case:
    """Everything one drive's forecasts share; ``run`` forecasts one set of settings."""

    def __init__(self, spec, src, ratio, share, data_gb, jobs=None, profile=None):
        self.spec = spec
        self.src = src
        self.ratio = ratio
        # the tape ratio along the sources' stream (ratio_profile), this drive's share of it
        self.profile = dict(profile, stream_mb=profile['stream_mb'] * share) if profile else None
        self.share = share
        self.data_gb = data_gb
        # (MB per job, seconds between jobs) of the application's jobs on one volume, or None; and the measured
        # cost of the synchronous mark that closes each (the write test's), or None for the model's
        self.jobs = jobs
        self.job_mark_s = None
        params = _forecast.drive_parameters(spec)
        self.need_full, self.need_floor = _forecast.need(params, ratio)
        self.flush_s = params['buffer_mb'] / params['native_mb_s']

    def feed(self, factor=1.0):
        """This drive's share of the feed (times ``factor``) as the forecast takes it: the measured series, else the
        mean."""
        if self.src['series']:
            return {'feed_mb_s': None, 'feed_series_mb_s': [v * self.share * factor for v in self.src['series']]}
        return {'feed_mb_s': self.src['mean_mb_s'] * self.share * factor, 'feed_series_mb_s': None}

    def below_floor(self, path=None):
        """True when this drive's share of the feed cannot reach its floor whatever the settings
        (``_forecast.below_floor``): its class is not STREAMING nor SPEED-MATCHED, known without a forecast."""
        return _forecast.below_floor(self.spec, tape_ratio=self.ratio, path_mb_s=path, **self.feed())

    def run(self, path=None, segment=None, mode='immediate', mark_s=None, factor=1.0, trace=False, jobs=True):
        """One forecast of this drive. ``jobs``: True for the application's jobs (``self.jobs``), None for none (the
        same data as one stream), or (MB per job, seconds between jobs) in their place."""
        jobs = self.jobs if jobs is True else jobs
        reposition = None
        if mark_s is None and jobs:
            # immediate segment marks cost nothing; the job's closing mark is synchronous and costs what one did
            mark_s = self.job_mark_s
        if mark_s is not None:
            # the benchmark wrote flat out, so its sync mark flushed a full buffer first; the rest is
            # the reposition the forecast adds after the flush
            reposition = max(0.0, mark_s - self.flush_s)
        job_mb, job_gap_s = jobs or (None, 0.0)
        return _forecast.forecast(
            self.spec, tape_ratio=self.ratio, path_mb_s=path, segment_size_mb=segment,
            filemark_mode=mode, filemark_seconds=reposition, data_gb=self.data_gb, min_samples=0, trace=trace,
            job_gb=None if job_mb is None else job_mb / 1000.0, job_gap_s=job_gap_s, ratio_profile=self.profile,
            **self.feed(factor))


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


class _FixStepsMixin:
    """The fix steps of a :class:`_Judgement`: setting fixes, more streams or staging, a faster path.

    Each fix is judged by the forecast with it against the forecast now; the
    steps read what the judgement's earlier steps set on ``self`` (the case,
    the forecasts, the drive path and the link).
    """

    def setting_fixes(self):
        """Block size, immediate file marks, segment size: each judged by the forecast with it against now."""
        now = self.now
        if self.best_bs and self.configured_bs is None and self.rates:
            self.fact('block_size_unknown', recommended=self.best_bs)
        elif self.best_bs and self.configured_bs != self.best_bs and self.rates:
            self.block_size_fix()
        if self.software is None:
            self.fact('application_unknown', software=self.software_named, known=list(SOFTWARE),
                      not_offered=list(APPLICATION_FIXES))
        # the block size the drive will be written with: the fix's, else the configured one (else the recommended)
        block = self.best_bs if 'block_size' in self.fixes or not self.configured_bs else self.configured_bs
        direct = st_direct_io(self.drive, block)
        if direct:
            # no forecast with it: the write test measured the copy through st's buffer, not without it
            self.add_fix('st_direct_io', {'max_sg_segs': direct['max_sg_segs'], 'block_size': direct['block_size']},
                         **direct)
        if self.mode_now == 'sync' and self.mode_fixed == 'immediate' and self.segment_mb:
            immediate = self.case.run(self.capped(self.path_now), self.segment_mb, 'immediate')
            if _better(immediate, now, 0.01):
                self.add_fix('immediate_filemarks', True, immediate, segment_mb=self.segment_mb, mark_s=self.mark_now,
                             segment_basis=self.segment_basis)
        if self.seg_recommended:
            bigger = self.case.run(self.capped(self.path_now), self.seg_recommended, 'sync', self.mark_now)
            if _better(bigger, now, 0.01):
                self.add_fix('segment_size', int(self.seg_recommended), bigger, segment_mb=self.segment_mb,
                             recommended_mb=self.seg_recommended, loss_target=self.opts['filemark_loss_target'],
                             segment_basis=self.segment_basis)
        self.job_size_fix()
        self.misconfigured = self.hard_error or (
            not self.src['inconclusive'] and _RANK[self.cls_fixed] > _RANK[self.cls_now])
        if self.misconfigured and not self.hard_error:
            self.finding('settings_limit_feed', 'error', class_now=self.cls_now, now_mb_s=now['effective_mb_s'],
                         class_fixed=self.cls_fixed, fixed_mb_s=self.fixed['effective_mb_s'])
        if 0 < now['backhitches_per_hour'] < _forecast.SHOESHINE_PER_HOUR and self.cls_now != SHOE_SHINING:
            self.finding('occasional_backhitches', 'warning', per_hour=now['backhitches_per_hour'],
                         shoeshine_per_hour=_forecast.SHOESHINE_PER_HOUR)

    def job_size_fix(self):
        """The application's job boundaries against the same data written as one stream: where they cost the drive
        its class or its rate, a finding, and fewer, larger jobs as a fix, judged by the forecast with them.

        A job ends with a synchronous file mark whatever the file-mark setting, and after a gap between jobs the
        drive repositions once more to start; the job size whose boundaries cost at most ``filemark_loss_target``
        of the time is the segment rule's (:func:`segment_for_loss`) for that cost.
        """
        if not self.case.jobs or self.src['inconclusive']:
            return
        job_mb, gap_s = self.case.jobs
        args = (self.capped(self.path_now), self.segment_mb, self.mode_now, self.mark_now)
        alone = self.case.run(*args, jobs=None)
        if not _better(alone, self.now):
            return
        restart = (_records.finite(_get(self.spec, 'backhitch_s')) or 0.0) if gap_s > 0 else 0.0
        mark_s, mark_basis = self.sync_mark_cost()
        # the jobs, not the feed, cost the class: a disk stage does not take their boundaries away (stream_fixes)
        self.jobs_limit = _RANK[alone['class']] > _RANK[self.now['class']]
        if self.jobs_limit:
            self.finding('job_boundaries_limit', 'warning', job_size_mb=job_mb, job_gap_s=gap_s,
                         job_marks=self.now.get('job_boundaries'), class_now=self.now['class'],
                         class_alone=alone['class'], now_mb_s=self.now['effective_mb_s'],
                         alone_mb_s=alone['effective_mb_s'])
        recommended = segment_for_loss(self.need_full, mark_s + restart, self.opts['filemark_loss_target'])
        if not recommended or recommended <= job_mb:
            return
        recommended = _hundreds_up(recommended)
        bigger = self.case.run(*args, jobs=(recommended, gap_s))
        if _better(bigger, self.now, 0.01):
            self.add_fix('job_size', int(recommended), bigger, job_size_mb=job_mb, job_gap_s=gap_s,
                         recommended_mb=recommended, loss_target=self.opts['filemark_loss_target'],
                         mark_s=round(mark_s, 3), restart_s=round(restart, 3), mark_basis=mark_basis)

    def sync_mark_cost(self):
        """(seconds, basis) a synchronous file mark costs this drive: the write test's measure (``measured``), else
        the model's flush of a full buffer plus its ``sync_mark_s`` (a drive described without it: a back-hitch, as
        in the forecast; ``model``)."""
        measured = self.costs.get('sync')
        if measured is not None:
            return measured, 'measured'
        spec_mark = _records.finite(_get(self.spec, 'sync_mark_s', _get(self.spec, 'backhitch_s'))) or 0.0
        return self.case.flush_s + spec_mark, 'model'

    def block_size_fix(self):
        """The sweep's best block size against the configured one, judged by the forecast with it."""
        block = self.case.run(self.capped(self.best_rate), self.segment_mb, self.mode_now, self.mark_now)
        if self.hard_error or _better(block, self.now) or (
                self.path_now is not None and self.best_rate > self.path_now * (1 + self.opts['block_size_tolerance'])
                and self.best_bs >= VENDOR_MIN_BLOCK > (self.configured_bs or 0)):
            self.add_fix('block_size', self.best_bs, block, best_mb_s=self.best_rate, path_mb_s=self.path_now,
                         block_size=self.configured_bs, limit=self.limit, limit_source=self.limit_source)

    def stream_fixes(self):
        """More streams (from the measured scaling curve), else staging to disk."""
        src, max_streams = self.src, int(self.opts['max_streams'])
        self.planned = src['streams']
        self.n_floor = self.n_full = None
        self.source_limited = (self.path_cap(self.path_fixed) is None or self.path_fixed >= self.need_floor) and (
            not self.link_caps or self.link_mb_s >= self.need_floor)
        if src['inconclusive'] or not self.source_limited:
            return
        factors = {}
        for count in range(1, max_streams + 1):
            value, basis = feed_at_streams(src, count)
            factors[count] = (value / src['mean_mb_s'] if src['mean_mb_s'] else 0.0, basis)
        for count in range(1, max_streams + 1):
            # below the floor on average the forecast cannot be better than shoe-shining
            if factors[count][0] <= 0 or self.feed_mean * factors[count][0] < self.need_floor * (1.0 - 1e-6):
                continue
            trial = self.run_fixed(factors[count][0])
            if self.n_floor is None and trial['class'] in (SPEED_MATCHED, STREAMING):
                self.n_floor = count
            if trial['class'] == STREAMING:
                self.n_full = count
                break
        target = self.n_full or self.n_floor
        # where the application's job boundaries, not the feed, make the drive shoe-shine, no stage is a fix: a
        # staged backup still ends each job with its synchronous mark (job_size_fix)
        if self.jobs_limit and self.n_floor is None:
            return
        if self.software in NO_MULTIPLEXING and self.cls_fixed != STREAMING and (
                (target and target > src['streams']) or (self.cls_fixed == SHOE_SHINING and self.n_floor is None)):
            # one backup at a time into the drive: its stage (a holding disk) is the fix, not more streams
            self.add_fix('staging', None, feed_mb_s=self.feed_mean, basis=None, max_streams=1, multiplexing=False,
                         need_full_mb_s=self.need_full)
        elif self.cls_fixed != STREAMING and target and target > src['streams']:
            self.planned = target
            self.add_fix('streams', target, self.run_fixed(factors[target][0]),
                         feed_mb_s=feed_at_streams(src, target)[0] * self.share, basis=factors[target][1],
                         reaches_full=bool(self.n_full), max_streams=self.opts['max_streams'])
        elif self.cls_fixed == SHOE_SHINING and self.n_floor is None:
            best_value, best_basis = feed_at_streams(src, max_streams)
            self.add_fix('staging', None, feed_mb_s=best_value * self.share, basis=best_basis,
                         max_streams=self.opts['max_streams'])

    def path_fixes(self):
        """A faster drive path: only when the sweep shows it below what the drive itself takes, or the link caps."""
        cap = self.path_cap(self.path_fixed)
        if cap is not None and cap < self.need_full and not self.src['inconclusive']:
            self.add_fix('drive_path', None, cause='path', path_mb_s=cap, pattern_ratio=self.pattern_ratio,
                         drive_takes_mb_s=self.drive_takes, need_floor_mb_s=self.need_floor)
        if self.link_caps and self.link_mb_s < self.feed_mean and 'drive_path' not in self.fixes \
                and not self.src['inconclusive']:
            self.add_fix('drive_path', None, cause='link', link=self.link_info, link_mb_s=self.link_mb_s,
                         label=self.label, need_full_mb_s=self.need_full, ratio=self.ratio,
                         feed_mean_mb_s=self.feed_mean)


class _HealthMixin:
    """The drive's health in the verdict: the likely cause of a sweep slower than the drive's model."""

    def health_cause(self):
        """Health findings on a drive whose sweep ran below what it takes of that data: a finding, and the health
        fixes (``HEALTH_FIX``) first, before any source or setting fix. Nothing without both."""
        findings = [f.to_dict() if isinstance(f, _records.Record) else dict(f)
                    for f in _get(self.health, 'findings') or [] if isinstance(f, (dict, _records.Record))]
        slow = self.path_cap(self.path_fixed)
        if not findings or slow is None:
            return
        self.finding('health_likely_cause', 'warning', status=_get(self.health, 'status'), path_mb_s=slow,
                     drive_takes_mb_s=self.drive_takes, pattern_ratio=self.pattern_ratio)
        for fix in [f['fix'] for f in findings if f.get('fix')]:
            if HEALTH_FIX + fix not in self.fixes:
                self.add_fix(HEALTH_FIX + fix, None, fix=fix, findings=[f for f in findings if f.get('fix') == fix],
                             path_mb_s=slow, drive_takes_mb_s=self.drive_takes, pattern_ratio=self.pattern_ratio)


class _DecisionMixin:
    """The last steps of a :class:`_Judgement`: the closing facts and the decision as data (numbers, forecasts)."""

    def conclusion(self):
        """The closing facts, the model's estimates as findings; an inconclusive source keeps only invalid settings."""
        if self.src['inconclusive']:
            self.fact('inconclusive', reason=self.src['inconclusive'])
        else:
            if self.ratio_profile:
                ratios = self.ratio_profile['ratios']
                self.fact('ratio_profile', windows=len(ratios), low=min(ratios), high=max(ratios),
                          ratio=self.ratio, need_floor_high_mb_s=_round(self.floor * max(ratios))
                          if self.floor else None)
            self.fact('forecast_now', forecast=_brief(self.now), need_floor_mb_s=self.need_floor,
                      need_full_mb_s=self.need_full, **self.limiter())
            if self.misconfigured and not self.hard_error:
                self.fact('forecast_fixed', forecast=_brief(self.fixed), need_floor_mb_s=self.need_floor,
                          need_full_mb_s=self.need_full)
        # the mark cost only where the forecast pays it: synchronous marks the write test did not measure
        unmeasured_marks = self.mode_now == 'sync' and bool(self.segment_mb) and self.mark_now is None
        for name in ('buffer_mb', 'backhitch_s') + (('sync_mark_s',) if unmeasured_marks else ()):
            if name in self.estimated:
                self.finding('estimated_%s' % name, 'info', value=_records.finite(_get(self.spec, name)) or 0,
                             basis=self.estimated[name])
        if self.src['inconclusive']:
            # nothing the forecast says can be trusted yet; an invalid setting stays a fix
            self.fixes = dict((k, v) for k, v in self.fixes.items() if k == 'block_size' and self.hard_error)

    def numbers(self):
        src, now, fixed, restore, link = self.src, self.now, self.fixed, self.restore, self.link_info or {}
        return {
            'source_mean_mb_s': _round(src['mean_mb_s']), 'source_sustained_mb_s': _round(src['sustained_mb_s']),
            'source_sustained_basis': src['sustained_basis'], 'source_min_mb_s': _round(src['min_mb_s']),
            'source_max_mb_s': _round(src['max_mb_s']), 'source_samples': src['samples'],
            'feed_share': round(self.share, 4), 'drives_sharing': self.drives_sharing,
            'feed_mean_mb_s': _round(self.feed_mean), 'feed_sustained_mb_s': _round(self.feed_sustained),
            'streams_measured': src['streams'], 'per_stream_mb_s': _round(src['per_stream_mb_s']),
            'tape_ratio': round(self.ratio, 3), 'tape_ratio_basis': self.ratio_basis,
            'native_mb_s': self.native, 'speed_floor_mb_s': self.floor,
            'floor_estimated': 'speed_floor_mb_s' in self.estimated,
            'need_full_mb_s': _round(self.need_full), 'need_floor_mb_s': _round(self.need_floor),
            'drive_path_mb_s': _round(self.path_now), 'drive_path_basis': self.path_basis,
            'drive_path_best_mb_s': _round(self.best_rate),
            'link_transport': link.get('transport'), 'link_rate': link.get('rate'),
            'link_mb_s': _round(self.link_mb_s), 'link_caps': self.link_caps,
            'block_size_bytes': self.configured_bs, 'best_block_size_bytes': self.best_bs,
            'block_size_limit_bytes': self.limit,
            'filemark_seconds_sync': self.costs.get('sync'), 'filemark_seconds_immediate': self.costs.get('immediate'),
            'filemark_mode': self.mode_now, 'segment_size_mb': self.segment_mb,
            'feed_now_mb_s': _round(now['effective_mb_s']),
            'feed_after_setting_fixes_mb_s': _round(fixed['effective_mb_s']),
            'backhitches_per_hour_now': now['backhitches_per_hour'], 'drive_reported_backhitches': self.reported,
            'backhitches_per_hour_after_setting_fixes': fixed['backhitches_per_hour'],
            'streams_needed_floor': self.n_floor, 'streams_needed_full': self.n_full,
            'memory_needed_mb': None, 'memory_total_mb': _records.finite(self.memory_total_mb), 'streams_planned': self.planned,
            'restore_mb_s': restore['mb_s'] if restore else None,
            'restore_write_mb_s': restore['write_mb_s'] if restore else None,
            'restore_verified': restore['verified'] if restore else None,
            # where the segment and block sizes come from, only when there is one (documents without them stay
            # as they were)
            **({'segment_size_basis': self.segment_basis} if self.segment_basis else {}),
            **({'block_size_basis': self.block_basis} if self.block_basis else {}),
            # the application's jobs, only when given (documents without them stay as they were)
            **({'job_size_mb': self.case.jobs[0], 'job_gap_s': self.case.jobs[1],
                'job_marks_now': now.get('job_boundaries')} if self.case.jobs else {}),
        }

    def decision(self):
        """The structured verdict: classes, numbers, the forecasts, and facts / findings / fixes as data."""
        trace = self.now.pop('trace', [])
        return {
            'class': MISCONFIGURED if self.misconfigured else self.cls_now,
            'class_at_current_settings': self.cls_now,
            'class_after_setting_fixes': self.cls_fixed,
            'would_shoe_shine': self.cls_now == SHOE_SHINING,
            'inconclusive_reason': self.src['inconclusive'],
            'what_if': bool(self.what_if),
            'drive_label': self.label,
            'numbers': self.numbers(),
            'forecast': {'now': _brief(self.now), 'after_setting_fixes': _brief(self.fixed), 'trace': trace},
            'facts': self.facts,
            'findings': self.findings,
            'fixes': [dict(fix, id=key) for key, fix in self.fixes.items()],
        }


class _Judgement(_FixStepsMixin, _HealthMixin, _DecisionMixin):
    """One host x drive judged: each step adds facts (reasons as data), findings and fixes.

    ``evaluate`` runs the steps in order; every step reads what the earlier
    ones set on ``self`` (a class rather than one long function, so that each
    step stays short and the steps share the drive's case without a dozen
    arguments each). Here: the inputs and what was measured (sources, drive
    path, link, the drive's counters) and the forecasts; the fixes are
    :class:`_FixStepsMixin`'s steps, the decision :class:`_DecisionMixin`'s.
    """

    def __init__(self, spec, source, tape, drive, config, memory_total_mb, options, what_if, share, drives_sharing,
                 observed_ratio=None, health=None, btape=None):
        self.health = health
        self.btape_record = _records.BtapeSpeed.from_result(btape)
        # the application's job boundaries, not the feed, cost the class (job_size_fix)
        self.jobs_limit = False
        self.opts = dict(DEFAULTS)
        self.opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
        self.config = dict(config or {})
        self.software = self.config.get('software') if self.config.get('software') in SOFTWARE else None
        # the application as the inventory names it (None: unset), for the words of an application not known
        self.software_named = str(self.config['software']) if self.config.get('software') else None
        self.spec, self.source, self.tape, self.drive = spec, source, tape, drive
        self.memory_total_mb, self.what_if, self.drives_sharing = memory_total_mb, what_if, drives_sharing
        self.label = _get(spec, 'label') or 'this drive'
        self.native = _records.finite(_get(spec, 'native_mb_s'))
        self.floor = _records.finite(_get(spec, 'speed_floor_mb_s'))
        self.estimated = dict(_get(spec, 'estimated') or ())
        self.src = source_numbers(source, spec)
        self.share = _records.finite(share) or 1.0
        self.ratio, self.ratio_basis = tape_ratio(spec, source, self.opts.get('tape_ratio'), observed_ratio, tape)
        self.ratio_unused = ratio_unused(observed_ratio, self.ratio_basis, self.ratio)
        self.ratio_profile = ratio_profile(source, self.ratio, tape) if self.opts.get('ratio_profile') else None
        try:
            self.case = _Case(spec, self.src, self.ratio, self.share, _records.finite(self.opts.get('data_gb')),
                              jobs=self.jobs(), profile=self.ratio_profile)
        except _forecast.ForecastInputError as exc:
            raise VerdictInputError(str(exc)) from None
        self.need_full, self.need_floor = self.case.need_full, self.case.need_floor
        self.feed_mean = self.src['mean_mb_s'] * self.share
        self.feed_sustained = self.src['sustained_mb_s'] * self.share
        self.facts, self.findings, self.fixes = [], [], {}

    def jobs(self):
        """(MB per job, seconds between jobs) from the settings' ``job_size_mb`` / ``job_gap_s``, or None."""
        job_mb = _records.finite(self.config.get('job_size_mb'))
        if not job_mb or job_mb <= 0:
            return None
        return job_mb, max(0.0, _records.finite(self.config.get('job_gap_s')) or 0.0)

    def basis_of(self, key):
        """Where the config's ``key`` came from: ``inventory``, or what the assembly says (``sd_config``...)."""
        return (self.config.get('sources') or {}).get(key) or 'inventory'

    def fact(self, fact_id, **data):
        self.facts.append(dict(data, id=fact_id))

    def finding(self, finding_id, severity, **data):
        self.findings.append(dict(data, id=finding_id, severity=severity))

    def add_fix(self, fix_id, value, after=None, **data):
        """A fix as data: its value, the forecast with it, before/after backup rate and the gain."""
        fix = {'id': fix_id, 'value': value, 'feed_before_mb_s': _round(self.now['effective_mb_s']),
               'feed_after_mb_s': None, 'gain_mb_s': None, 'data': dict(data, software=self.software)}
        if after is not None:
            fix.update(feed_after_mb_s=_round(after['effective_mb_s']), forecast=_brief(after),
                       gain_mb_s=_round(after['effective_mb_s'] - self.now['effective_mb_s']))
        self.fixes[fix_id] = fix

    def sources(self):
        src = self.src
        self.fact('sources', mean_mb_s=src['mean_mb_s'], sustained_mb_s=src['sustained_mb_s'],
                  samples=src['samples'], streams=src['streams'], passes=src['passes'],
                  drives_sharing=self.drives_sharing, share=self.share, feed_mean_mb_s=self.feed_mean)
        sizes = _get(self.source, 'file_sizes') or {}
        if isinstance(sizes, dict) and sizes.get('text'):
            self.fact('file_sizes', text=sizes['text'])
            if sizes.get('small_file_bound'):
                self.finding('small_file_bound', 'warning', text=sizes['text'])
        passed_over = _get(self.source, 'passed_over_counts') or {}
        if isinstance(passed_over, dict) and any(passed_over.values()):
            # entries of the trees the read left out (symlinks, FIFOs, files that cannot be opened...)
            self.fact('passed_over', counts=dict((k, n) for k, n in sorted(passed_over.items()) if n))
        ingest = _get(self.source, 'ingest') or {}
        with_ingest = _records.finite(((ingest.get('with') or {}).get('mean_mb_s')) if isinstance(ingest, dict) else None)
        without_ingest = _records.finite(((ingest.get('without') or {}).get('mean_mb_s')) if isinstance(ingest, dict) else None)
        if with_ingest is not None and without_ingest is not None:
            self.fact('ingest', target_text=ingest.get('target_text'), with_mb_s=with_ingest,
                      without_mb_s=without_ingest)
        self.fact('need_full', label=self.label, need_full_mb_s=self.need_full, native_mb_s=self.native,
                  ratio=self.ratio, ratio_basis=self.ratio_basis,
                  interface_caps=not self.need_full >= self.native * self.ratio - 1e-6)
        if self.ratio_unused is not None:
            # qualify_tape_ratio_from was given, and its drive's own ratio is not the one used: why
            self.facts.append(dict(self.ratio_unused))
        self.fact('need_floor', floor_mb_s=self.floor, need_floor_mb_s=self.need_floor, ratio=self.ratio,
                  estimate=self.estimated.get('speed_floor_mb_s'))

    def drive_path(self):
        """The drive path (host -> HBA -> drive), from the write sweep."""
        self.rates, self.pattern_ratio = sweep_rates(self.tape, self.ratio)
        self.limit, self.limit_source = _block_limit(self.drive)
        if isinstance(self.config.get('sd'), dict):
            # what the storage daemon's configuration says for this drive, or why it says nothing
            self.fact('sd_config', **self.config['sd'])
        if isinstance(self.config.get('netbackup'), dict):
            # the media server's buffer files (SIZE_DATA_BUFFERS ...), with what the buffers hold against the drive
            self.fact('netbackup_config', need_full_mb_s=self.need_full,
                      drive_buffer_mb=_records.finite(_get(self.spec, 'buffer_mb')), **self.config['netbackup'])
        configured = _records.finite(self.config.get('block_size_bytes'))
        self.block_basis = self.basis_of('block_size_bytes') if configured else None
        if not configured and self.software in DEFAULT_BLOCK_BYTES:
            configured, self.block_basis = DEFAULT_BLOCK_BYTES[self.software], 'default'
            self.fact('block_default', software=self.software, block_size=configured,
                      basis=DEFAULT_BLOCK_BASIS[self.software])
        if not configured and _records.finite(_get(self.drive, 'block_size')):
            configured, self.block_basis = _records.finite(_get(self.drive, 'block_size')), 'drive'
        self.configured_bs = int(configured) if configured else None
        self.best_bs, self.best_rate = recommend_block_size(self.rates, self.opts['block_size_tolerance'], self.limit)
        self.path_now, self.path_basis = path_rate(self.rates, self.configured_bs)
        self.hard_error = bool(self.configured_bs and self.limit and self.configured_bs > self.limit)
        if self.hard_error:
            self.finding('block_size_over_limit', 'error', block_size=self.configured_bs, limit=self.limit,
                         limit_source=self.limit_source)
        if self.path_basis and self.path_basis['id'] in PATH_NOT_MEASURED:
            self.finding('block_size_not_measured', 'warning', block_size=self.configured_bs,
                         path_mb_s=self.path_now, basis=self.path_basis)
        self.drive_takes = None
        if self.rates:
            self.fact('sweep', rates=[[s, self.rates[s]] for s in sorted(self.rates)],
                      pattern_ratio=self.pattern_ratio)
            if without_physics(self.drive):
                self.finding('no_physics', 'info', path_mb_s=max(self.rates.values()))
            self.drive_takes = min(self.native * self.pattern_ratio,
                                   _records.finite(_get(self.spec, 'compressed_max_mb_s')) or self.native * self.pattern_ratio)
        elif self.what_if:
            self.fact('what_if_not_installed', label=self.label)
        else:
            self.fact('no_sweep')

    def btape(self):
        """btape's speed test (Bacula/Bareos hosts), a second measurement of the drive path: set against the sweep."""
        if self.btape_record is None:
            return
        if not self.btape_record.ran:
            self.fact('btape_not_run', reason=self.btape_record.reason, msg=self.btape_record.msg)
            return
        seen = btape_against_sweep(self.btape_record, self.tape, _records.finite(_get(self.spec, 'buffer_mb')))
        self.fact('btape', **seen)
        if seen['delta_pct'] is not None and abs(seen['delta_pct']) > self.opts['btape_disagree_pct']:
            self.finding('btape_disagrees', 'warning', limit_pct=self.opts['btape_disagree_pct'], **seen)

    def path_cap(self, rate):
        """The path limits the feed only where it is clearly below what the drive takes of that data."""
        if rate is None or self.drive_takes is None:
            return None
        if rate >= self.drive_takes * (1.0 - PATH_NOISE):
            return None
        return rate

    def capped(self, rate):
        """The path the forecast gets: the sweep's cap, and the link where it is below what the drive takes."""
        cap = self.path_cap(rate)
        if self.link_caps:
            cap = self.link_mb_s if cap is None else min(cap, self.link_mb_s)
        return cap

    def link(self):
        """The HBA link (sysfs: SAS negotiated link rate, FC port speed) against what the drive takes."""
        self.link_mb_s, self.link_info = drive_link(self.drive)
        self.link_caps = self.link_mb_s is not None and self.link_mb_s < self.need_full
        if self.link_mb_s is not None:
            state = 'enough'
            if self.link_caps:
                state = 'caps_drive' if self.feed_mean > self.link_mb_s else 'caps_sources_lower'
            self.fact('link', state=state, link=self.link_info, link_mb_s=self.link_mb_s, label=self.label,
                      need_full_mb_s=self.need_full, ratio=self.ratio, feed_mean_mb_s=self.feed_mean,
                      compressed_max_mb_s=_records.finite(_get(self.spec, 'compressed_max_mb_s')))
        elif self.link_info is not None and self.link_info.get('text'):
            self.fact('link_text', text=self.link_info['text'])

    def drive_counters(self):
        """What the drive itself counted (LOG SENSE back-hitches) and the read-back of the sweep."""
        before = _sg_logs.backhitch_count(_get(self.tape, 'log_pages_before'))
        after = _sg_logs.backhitch_count(_get(self.tape, 'log_pages_after'))
        self.reported = after - before if after is not None and before is not None and after >= before else None
        if self.reported is not None:
            self.fact('drive_backhitches', count=self.reported)
        self.restore = restore_numbers(self.tape)
        if self.restore is not None:
            self.fact('restore', **self.restore)
            if self.restore['verified'] is False:
                self.finding('read_back_not_verified', 'error', mismatched_blocks=self.restore['mismatched_blocks'],
                             error=self.restore['error'])

    def forecasts(self):
        """The forecast now and with the setting fixes (best block size, immediate marks, bigger segments)."""
        costs = self.costs = _filemark_costs(self.tape)
        self.segment_mb = _records.finite(self.config.get('segment_size_mb'))
        self.segment_basis = self.basis_of('segment_size_mb') if self.segment_mb is not None else None
        if self.segment_mb is None and self.software in DEFAULT_SEGMENT_MB:
            self.segment_mb, self.segment_basis = DEFAULT_SEGMENT_MB[self.software], 'default'
            self.fact('segment_default', software=self.software, segment_mb=self.segment_mb)
        elif self.segment_mb is None and self.software in MARK_PER_BACKUP and not self.case.jobs:
            self.fact('segment_per_backup', software=self.software)
        immediate_now = bool(self.config.get('immediate_filemarks'))
        immediate_possible = _get(self.drive, 'mtweofi_supported')
        probed = _get(self.tape, 'mtweofi_supported')
        if probed is not None and 'probe' in str(_get(self.tape, 'mtweofi_basis') or ''):
            # the write benchmark asked the driver itself on the open drive: that answer wins
            immediate_possible = probed
        if immediate_possible is None and 'immediate' in costs:
            immediate_possible = True
        # an application not known: its file marks are no fix, so the forecast with the fixes keeps them
        software_has_immediate = self.software is not None and self.software not in NO_IMMEDIATE_MARKS
        self.mode_now = 'immediate' if immediate_now else 'sync'
        self.mark_now = costs.get('sync') if self.mode_now == 'sync' else None
        self.case.job_mark_s = costs.get('sync')
        self.now = self.case.run(self.capped(self.path_now), self.segment_mb, self.mode_now, self.mark_now, trace=True)
        self.cls_now = INCONCLUSIVE if self.src['inconclusive'] else self.now['class']
        self.path_fixed = self.best_rate if self.best_rate is not None and (
            self.path_now is None or self.best_rate > self.path_now) else self.path_now
        self.mode_fixed = 'immediate' if (immediate_now or (immediate_possible and software_has_immediate)) else 'sync'
        self.seg_fixed = self.segment_mb
        self.seg_recommended = None
        if self.mode_fixed == 'sync' and self.segment_mb and self.software is not None:
            recommended = segment_for_loss(self.need_full, self.sync_mark_cost()[0], self.opts['filemark_loss_target'])
            if recommended and self.segment_mb < recommended:
                self.seg_recommended = self.seg_fixed = _hundreds_up(recommended)
        self.fixed = self.run_fixed()
        self.cls_fixed = self.fixed['class'] if not self.src['inconclusive'] else INCONCLUSIVE
        if self.case.jobs:
            self.fact('jobs', job_size_mb=self.case.jobs[0], job_gap_s=self.case.jobs[1],
                      job_marks=self.now.get('job_boundaries'), seconds=self.now.get('simulated_seconds'),
                      mark_s=self.case.job_mark_s)

    def run_fixed(self, factor=1.0):
        """The forecast with every setting fix (times ``factor`` the feed: more streams)."""
        return self.case.run(self.capped(self.path_fixed), self.seg_fixed, self.mode_fixed,
                             self.costs.get('sync') if self.mode_fixed == 'sync' else None, factor=factor)

    def limiter(self):
        """What limits the backup now, as data (``_words`` says it)."""
        limiter = 'sources'
        if self.path_cap(self.path_now) is not None and self.path_now < self.feed_mean:
            limiter = 'path'
        if self.link_caps and self.link_mb_s < self.feed_mean and (
                self.path_cap(self.path_now) is None or self.link_mb_s <= self.path_now):
            limiter = 'link'
        return {'limiter': limiter, 'block_size': self.configured_bs, 'link': self.link_info,
                'link_mb_s': self.link_mb_s,
                'filemark_segment_mb': self.segment_mb if self.now['backhitches_filemark'] else None}


def evaluate(spec, source, tape=None, drive=None, config=None, memory_total_mb=None, other_streams=0,
             options=None, what_if=False, share=1.0, drives_sharing=1, observed_ratio=None, health=None,
             btape=None):
    """The decision for one host x drive, as data (``_words.verdict`` words it). See the module docstring.

    ``spec``: a DriveSpec from ``_drive_model.lookup`` (or a mapping with the
    same fields). ``source``: the source_read_benchmark result. ``tape``: the
    tape_write_benchmark result or None (not measured / what-if). ``drive``:
    the drive's entry from tape_drive_info or None. ``config``: backup software
    settings {software, block_size_bytes, immediate_filemarks, segment_size_mb,
    concurrency}, with ``sources`` ({key: where it came from}: ``inventory``
    when absent, ``sd_config`` / ``sd_default`` from the storage daemon's
    configuration, ``netbackup_config`` / ``netbackup_default`` from a NetBackup
    media server's SIZE_DATA_BUFFERS: ``numbers``' block_size_basis and
    segment_size_basis), ``sd`` (what that configuration said for this drive,
    the ``sd_config`` fact) and ``netbackup`` (the media server's buffer files,
    the ``netbackup_config`` fact). ``memory_total_mb``: RAM of the host; ``other_streams``:
    streams planned for the host's other drives (for the memory rule).
    ``share``: this drive's share of the host's source feed (the host's drives
    read from the same sources at once); ``drives_sharing``: how many drives share it.
    ``observed_ratio``: the compression ratio the drive measured itself in an observe run, or why there is
    none (``_observed.drive_ratio``; ``tape_ratio`` says where it comes in), or None when none was asked for.
    ``health``: the drive's ``_records.Health`` (``_health.of_drive``) or None: where the sweep ran slower than the
    drive's model and it has findings, a ``health_likely_cause`` finding and its fixes first (``HEALTH_FIX``).
    ``btape``: btape_speed's result on the drive (``_records.BtapeSpeed``) or None: its rate set against the
    sweep's at its block size (``btape_against_sweep``), a ``btape_disagrees`` finding beyond
    ``btape_disagree_pct``.

    Returns {class, class_at_current_settings, class_after_setting_fixes,
    would_shoe_shine, inconclusive_reason, what_if, drive_label, numbers,
    forecast, facts, findings, fixes}: ``facts`` are the reasons as data
    ({'id', ...}), ``findings`` {'id', 'severity', ...}, ``fixes`` {'id',
    'rank', 'value', 'feed_before_mb_s', 'feed_after_mb_s', 'gain_mb_s',
    'forecast' (with the fix), 'data' (what its words need: the software, the
    measured rates, ...)}. No sentences: ``_words.verdict`` writes them.
    """
    judge = _Judgement(spec, source, tape, drive, config, memory_total_mb, options, what_if, share, drives_sharing,
                       observed_ratio, health, btape)
    for step in (judge.sources, judge.drive_path, judge.btape, judge.link, judge.drive_counters, judge.forecasts,
                 judge.setting_fixes, judge.stream_fixes, judge.path_fixes, judge.conclusion, judge.health_cause):
        step()
    decision = judge.decision()
    mark_contended(decision, source, tape)
    if what_if and not judge.src['inconclusive']:
        _apply_host_capacity(decision, spec, source, memory_total_mb, judge.opts,
                             judge.link_mb_s if judge.link_caps else None, observed_ratio)
    apply_memory(decision, memory_total_mb, other_streams, judge.opts)
    return decision


def contention(source, tape=None):
    """{'sources': ..., 'drive': ...} of the measurements others disturbed (their ``contention``), or None."""
    out = {}
    for side, record in (('sources', source), ('drive', tape)):
        found = _get(record, 'contention')
        if isinstance(found, dict) and found.get('contended'):
            out[side] = found
    return out or None


def mark_contended(decision, source, tape=None):
    """Mark a decision whose measurements were contended: ``contended`` and a warning finding with the numbers.

    The class stays the measured one: a contended measurement is a lower
    bound (others took their share), so the verdict is marked, not changed.
    """
    found = contention(source, tape)
    decision['contended'] = bool(found)
    if found:
        decision['findings'].append(dict(found, id='contended', severity='warning'))
    return decision


def busy_state(lock=None, sweep=None, identity=None):
    """Why a drive is BUSY (measured by no one: no verdict) as data, or None.

    ``lock``: the drive's tape_drive_lock record (busy: another run's lease,
    reason ``locked``, or processes with its nodes open, reason ``open``);
    ``sweep``: its write result (the write gate's ``busy`` refusal: EBUSY on
    open); ``identity``: tape_drive_info's entry (``busy``: mt status found the
    drive open), which counts only when no whole sweep was written after it.
    Returns {'reason': 'locked' | 'open' | 'busy', 'holder', 'users', 'basis'}.
    """
    if _get(lock, 'state') == 'busy':
        return {'reason': _get(lock, 'reason') or 'locked', 'holder': _get(lock, 'holder'),
                'users': list(_get(lock, 'users') or []), 'basis': 'lock'}
    if _get(sweep, 'reason') == 'busy':
        return {'reason': 'busy', 'holder': None, 'users': [], 'basis': 'write_test'}
    if _get(identity, 'busy') and not _get(sweep, 'sweep'):
        return {'reason': 'busy', 'holder': None, 'users': [], 'basis': 'discovery'}
    return None


def apply_memory(verdict, memory_total_mb, other_streams=0, options=None):
    """Add the memory rule (all of the host's planned streams) to a decision and rank its fixes."""
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    num = verdict['numbers']
    fixes = dict((fix['id'], fix) for fix in verdict['fixes'] if fix['id'] != 'memory')
    streams = int(num['streams_planned']) + int(other_streams or 0)
    mem_need = memory_needed_mb(streams, opts['memory_base_mb'], opts['memory_per_stream_mb'])
    mem_total = _records.finite(memory_total_mb)
    num['memory_needed_mb'] = mem_need
    num['memory_total_mb'] = mem_total
    if mem_total is not None and mem_total < mem_need and verdict['class'] != INCONCLUSIVE:
        memory = {'base_mb': opts['memory_base_mb'], 'per_stream_mb': opts['memory_per_stream_mb'],
                  'streams': streams, 'needed_mb': mem_need, 'total_mb': mem_total}
        fixes['memory'] = {'id': 'memory', 'value': mem_need, 'feed_before_mb_s': num['feed_now_mb_s'],
                           'feed_after_mb_s': None, 'gain_mb_s': None, 'data': {'memory': memory}}
    ranked = []
    health = [key for key in fixes if key.startswith(HEALTH_FIX)]
    for key in health + list(FIX_ORDER if 'streams' in fixes else FIX_ORDER_NO_STREAMS):
        if key in fixes:
            ranked.append(dict(fixes[key], id=key, rank=len(ranked) + 1))
    verdict['fixes'] = ranked
    return verdict


def _streams_of(item, config):
    cfg = dict(config or {})
    cfg.update(item.get('config') or {})
    return max(1, int(_records.finite(cfg.get('concurrency')) or 1))


def drives_kept_busy(spec, source, options=None, path_mb_s=None, observed_ratio=None, tape=None):
    """How many drives of ``spec`` the host's sources keep streaming / not shoe-shining at once.

    Each of k drives gets 1/k of the measured feed; the forecast decides (with
    ``path_mb_s``, each drive's path, e.g. its HBA link, capping its feed), at
    the verdict's tape ratio (``tape_ratio``, with the drive's ``observed_ratio``).
    Returns {'streaming': n, 'not_shoeshining': m} (0 when not even one).
    """
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    src = source_numbers(source, spec)
    ratio, _basis = tape_ratio(spec, source, opts.get('tape_ratio'), observed_ratio, tape)
    profile = ratio_profile(source, ratio, tape) if opts.get('ratio_profile') else None
    result = {'streaming': 0, 'not_shoeshining': 0}
    if src['inconclusive']:
        return result
    classes = {}

    def class_at(count):
        if count not in classes:
            case = _Case(spec, src, ratio, 1.0 / count, None, profile=profile)
            # a share below the floor is SHOE-SHINING (or INCONCLUSIVE, which counts the same here) unsimulated
            classes[count] = SHOE_SHINING if case.below_floor(path_mb_s) else case.run(path=path_mb_s)['class']
        return classes[count]

    result['not_shoeshining'] = _last_count((STREAMING, SPEED_MATCHED), class_at, MAX_DRIVES_COUNTED)
    result['streaming'] = _last_count((STREAMING,), class_at, result['not_shoeshining'])
    return result


def _last_count(classes, class_at, most):
    """The largest drive count up to ``most`` whose class (``class_at(count)``) is one of ``classes``; 0 when not
    even one drive's is.

    k drives share the feed one drive would get: each gets less as k grows, and a drive fed less does no better,
    so the classes only fall with the count. ``most`` is tried first (a host whose sources keep them all busy takes
    one forecast); else the count doubles from one until a class falls short, and the boundary is bisected: a few
    forecasts where trying every count took one each (16 at most).
    """
    if most < 1:
        return 0
    if class_at(most) in classes:
        return most
    good, bad, count = 0, most, 1
    while count < bad and class_at(count) in classes:
        good, count = count, count * 2
    bad = min(bad, count)
    while bad - good > 1:
        middle = (good + bad) // 2
        if class_at(middle) in classes:
            good = middle
        else:
            bad = middle
    return good


def host_capacity(spec, source, memory_total_mb=None, options=None, path_mb_s=None, observed_ratio=None):
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
    busy = drives_kept_busy(spec, source, opts, path_mb_s, observed_ratio)
    src = source_numbers(source)
    drives = busy['streaming'] or busy['not_shoeshining']
    streams = max(drives, src['streams']) if drives else 0
    need = memory_needed_mb(streams, opts['memory_base_mb'], opts['memory_per_stream_mb']) if drives else None
    total = _records.finite(memory_total_mb)
    short = None
    if need is not None and total is not None:
        short = max(0, int(math.ceil(need - total)))
    return dict(busy, drives=drives, streams=streams, memory_needed_mb=need, memory_total_mb=total,
                memory_short_mb=short)


def _apply_host_capacity(verdict, spec, source, memory_total_mb, options, path_mb_s, observed_ratio=None):
    """The what-if's host section: target drives kept busy at once and the memory at that concurrency."""
    opts = dict(DEFAULTS)
    opts.update(dict((k, v) for k, v in (options or {}).items() if v is not None))
    cap = host_capacity(spec, source, memory_total_mb, opts, path_mb_s, observed_ratio)
    num = verdict['numbers']
    label = verdict['drive_label']
    num['drives_streaming_at_once'] = cap['streaming']
    num['drives_not_shoeshining_at_once'] = cap['not_shoeshining']
    num['streams_at_once'] = cap['streams']
    num['memory_needed_at_once_mb'] = cap['memory_needed_mb']
    memory = {'base_mb': opts['memory_base_mb'], 'per_stream_mb': opts['memory_per_stream_mb'],
              'streams': cap['streams'], 'needed_mb': int(cap['memory_needed_mb'] or 0),
              'total_mb': cap['memory_total_mb'], 'short_mb': cap['memory_short_mb']}
    verdict['facts'].append({'id': 'host_capacity', 'label': label, 'held_mb_s': path_mb_s, 'drives': cap['drives'],
                             'streaming': cap['streaming'], 'not_shoeshining': cap['not_shoeshining'],
                             'streams': cap['streams'], 'memory': memory})
    if cap['drives'] and cap['memory_short_mb']:
        verdict['findings'].append({'id': 'memory_at_concurrency', 'severity': 'warning', 'drives': cap['drives'],
                                    'label': label, 'memory': memory})
    return verdict


def evaluate_host(drives, source, config=None, memory_total_mb=None, options=None, what_if=False):
    """Verdicts for every drive of one host: they share the sources and the memory.

    ``drives``: list of {'spec': DriveSpec, 'drive': tape_drive_info entry, 'tape': tape_write_benchmark
    result or None, 'config': per-drive settings overriding ``config``, 'observed_ratio': the ratio the drive
    measured in an observe run or why not (``evaluate``), optional, 'health': its Health, optional}. Each drive gets a share
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
                           options, what_if, share=streams[index] / total, drives_sharing=len(drives),
                           observed_ratio=item.get('observed_ratio'), health=item.get('health'),
                           btape=item.get('btape'))
        if 'drives_streaming_at_once' in verdict['numbers']:
            result.append(verdict)
            continue
        num = verdict['numbers']
        busy = drives_kept_busy(item['spec'], source, options, num['link_mb_s'] if num.get('link_caps') else None,
                                item.get('observed_ratio'), item.get('tape'))
        verdict['numbers']['drives_streaming_at_once'] = busy['streaming']
        verdict['numbers']['drives_not_shoeshining_at_once'] = busy['not_shoeshining']
        verdict['facts'].append({'id': 'drives_kept_busy', 'label': verdict['drive_label'],
                                 'streaming': busy['streaming'], 'not_shoeshining': busy['not_shoeshining']})
        result.append(verdict)
    planned = [v['numbers']['streams_planned'] for v in result]
    for index, verdict in enumerate(result):
        apply_memory(verdict, memory_total_mb, sum(planned) - planned[index], options)
    return result


def _round(value, digits=1):
    value = _records.finite(value)
    return None if value is None else round(value, digits)


def mechanics_findings(mechanics, side='current'):
    """Findings (as data, ``_words.finding`` words them) from a ``tape_mechanics_benchmark`` result.

    ``mechanics``: the drive's ``_records.Mechanics`` (or the host document's mechanics entry). ``side``:
    'current' for the measured drive's own verdict, 'target' for the what-if. A backup
    segment or file size below the size that reaches 90 % of the streaming
    rate with the measured time per file mark is a warning; a cartridge the
    benchmark could not put back is an error.
    """
    out = []
    if not isinstance(mechanics, (dict, _records.Mechanics)):
        return out
    for warning in _get(mechanics, 'size_warnings') or []:
        if isinstance(warning, dict) and warning.get('drive') == side and warning.get('text'):
            out.append({'id': 'object_size_below_90', 'severity': 'warning', 'text': warning['text']})
    if side == 'current' and _get(mechanics, 'restored') is False:
        out.append({'id': 'mechanics_cartridge_not_restored', 'severity': 'error',
                    'barcode': _get(mechanics, 'barcode'), 'final_location': _get(mechanics, 'final_location')})
    return out
