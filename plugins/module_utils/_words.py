# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The collection's words: the one place the controller's sentences are written.

Private to this collection: may change without notice. Pure Python, no
Ansible imports. Ground floor beside ``_records`` (it imports only the
records' verdict classes and the LOG SENSE page it names), so that both the
judge and the reports word what they hand over through it and no sentence is
written twice: ``_judge`` decides (``_verdict.evaluate``: class, numbers,
facts, findings and fixes as data; ``_host``: the host document) and never
words; ``_reporting`` renders.

:func:`verdict` turns a decision into the verdict the host document carries
(``_records.Verdict``: ``summary``, ``reasons``, each finding's ``text``,
each fix's ``title`` / ``setting`` / ``why``), the same words for Markdown,
HTML and JUnit (the templates only place them). A fact, a finding or a fix is
worded by the function of its ``id`` in the tables below. Further down: the
errors of a drive without a verdict, the fixes plan's sentences
(``_judge._fixes``) and the actions' messages.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._records import (
    INCONCLUSIVE, SHOE_SHINING, SPEED_MATCHED, STREAMING)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs

SOFTWARE_NAMES = {
    'data_protector': 'Data Protector',
    'bacula': 'Bacula',
    'bareos': 'Bareos',
    'netbackup': 'NetBackup',
    None: 'the backup software',
}


def fmt_rate(value):
    """'123 MB/s' / '12.3 MB/s' (or 'unknown')."""
    value = _records.finite(value)
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


def rounded_rate_below(a, b):
    """a < b in words: only when the rounded figures differ too (no "177 below the 177 floor")."""
    return a is not None and b is not None and a < b and fmt_rate(a) != fmt_rate(b)


def _plural(count, one='', many='s'):
    return one if count == 1 else many


def _ratio_text(pattern_ratio):
    return 'incompressible' if pattern_ratio == 1.0 else '%.1f:1' % pattern_ratio


# ---------------------------------------------------------------------------
# forecasts and classes


def backhitch_words(result):
    """'no back-hitches' / '75 back-hitches an hour (12 % of the time repositioning)'."""
    per_hour = result['backhitches_per_hour']
    if not per_hour:
        return 'no back-hitches'
    return '%.0f back-hitch%s an hour (%.0f %% of the time repositioning)' % (
        per_hour, '' if round(per_hour) == 1 else 'es', 100 * result['time_share']['repositioning'])


def compare_words(before, after):
    """'SHOE-SHINING -> STREAMING, 30.0 MB/s -> 140 MB/s'."""
    return '%s -> %s, %s -> %s' % (before['class'], after['class'], fmt_rate(before['effective_mb_s']),
                                   fmt_rate(after['effective_mb_s']))


# ---------------------------------------------------------------------------
# what a number rests on (_verdict's bases: feed_at_streams, tape_ratio, path_rate)


def _sample_text(sample_bytes):
    if not sample_bytes:
        return 'bounded'
    return '%.0f MB' % (sample_bytes / 1e6) if sample_bytes >= 1e6 else '%.0f kB' % (sample_bytes / 1e3)


def _how(how):
    if how['id'] == 'extrapolated':
        return 'extrapolated below %s, the smallest size measured' % fmt_bytes(how['smallest'])
    return 'interpolated between %s and %s' % (fmt_bytes(how['lower']), fmt_bytes(how['upper']))


BASES = {
    'streams_linear': lambda b: '%d x the %s measured per stream (linear: an assumption, no scaling was measured)' % (
        b['streams'], fmt_rate(b['per_stream_mb_s'])),
    'streams_first_step': lambda b: 'measured scaling (%d stream%s: %s)' % (
        b['streams'], _plural(b['streams']), fmt_rate(b['mb_s'])),
    'streams_curve': lambda b: 'measured scaling, %s between %d and %d streams' % (
        'at' if b['at_step'] else 'interpolated', b['lower'], b['upper']),
    'streams_beyond_curve': lambda b: 'no more than at %d streams (%s), the largest step measured: more streams were '
                                      'not measured, so no gain is assumed' % (b['streams'], fmt_rate(b['mb_s'])),
    'ratio_set': lambda b: 'set by the user',
    'ratio_sampled': lambda b: 'estimated from a %s sample of the sources (%s ratio %.2f)%s' % (
        _sample_text(b['sample_bytes']), b['compressor'] or 'software', b['ratio'], _calibrated(b)),
    'ratio_nominal': lambda b: "the drive's nominal ratio, as no compressibility sample was taken: the worst case "
                               "for streaming",
    'ratio_observed': lambda b: 'measured by the drive itself over an observed job (%s)%s' % (
        _observed_job(b), '; the source sample estimated %.2f' % b['sampled'] if b.get('sampled') else ''),
    'path_best': lambda b: 'best measured (%s)' % fmt_bytes(b['block_size']),
    'path_measured': lambda b: 'measured',
    'path_above_largest': lambda b: 'not measured: the rate at %s, the largest size measured' % fmt_bytes(
        b['block_size']),
    'path_scaled_from_one': lambda b: 'not measured: %s, scaled from the one size measured' % _how(b['how']),
    'path_fitted': lambda b: 'not measured: %s (per-command cost fitted to them)' % _how(b['how']),
}


def _calibrated(basis):
    """How this drive's own compressor mapped a sample (the write test's compression probe), or ''."""
    cal = basis.get('calibration')
    if not cal:
        return ''
    seen = ', '.join('%s data (zlib %.2f) at %.2f:1' % (p[0], p[1], p[2]) for p in cal['points'])
    return (", mapped by this drive's own compressor as the write test measured it (%s; the default model gave "
            "%.2f)" % (seen, basis['default_estimate']))


def _job_volume(value):
    """A job's volume: ``_data_size`` below a GB, else GB / TB with one decimal."""
    value = float(value)
    if value < 1e9:
        return _data_size(value)
    return '%.1f GB' % (value / 1e9) if value < 1e12 else '%.1f TB' % (value / 1e12)


def _observed_job(b):
    """'observe run X, Bacula job 1: 231 MB in 80 s' of a ``ratio_observed`` basis (or fact)."""
    text = 'observe run %s' % b.get('run')
    if b.get('jobid') is not None:
        text += ', Bacula job %s' % b['jobid']
    if b.get('bytes') is not None and b.get('data_seconds') is not None:
        text += ': %s in %s' % (_job_volume(b['bytes']), _duration(b['data_seconds']))
    return text


def basis(data):
    """What a number rests on, in words (None stays None; a text, as a host document holds it, stays as it is)."""
    if data is None or isinstance(data, str):
        return data
    return BASES[data['id']](data)


# ---------------------------------------------------------------------------
# the mechanics section's notes (_report_mechanics.notes decides, as data)

MECHANICS_NOTES = {
    'size_warning': lambda n: n['text'],
    'filemarks_refused': lambda n: 'No file marks were written (%s): %s' % (n['reason'], n['msg']),
    'locate_not_measured': lambda n: 'Locate not measured: %s' % n['error'],
    'not_restored': lambda n: 'The cartridge %s is NOT back where it started (%s): put it back by hand.' % (
        n['barcode'], n['where']),
    'target_scaling': lambda n: 'Target %s: %s.' % (n['operation'], n['basis']),
}


def mechanics_note(note):
    """One note of a drive's mechanics, in words."""
    return MECHANICS_NOTES[note['id']](note)


# ---------------------------------------------------------------------------
# comparison with an earlier run (_compare decides, as data)

COMPARED_NUMBERS = {
    'feed_now_mb_s': 'backup rate (forecast)',
    'drive_path_best_mb_s': 'best drive path',
    'source_sustained_mb_s': 'sources sustained',
}


def compare_reason(reason):
    """One reason of ``_compare._change`` in words."""
    kind = reason['id']
    if kind == 'new':
        return 'not measured in the earlier run'
    if kind == 'host_not_in_run':
        return 'host not part of this run'
    if kind == 'verdict_lost':
        return 'had a verdict (%s) and has none now (host %s)' % (
            reason['class'], reason['host_status'] or 'without this drive')
    if kind == 'inconclusive':
        return 'INCONCLUSIVE %s: the measurement is too short to compare' % reason['side']
    if kind == 'class':
        return '%s -> %s' % (reason['before'], reason['after'])
    return '%s %.1f -> %.1f MB/s (%+.1f %%)' % (
        COMPARED_NUMBERS[reason['name']], reason['before'], reason['after'], reason['pct'])


def class_words(result, need_floor, need_full):
    """A forecast's class with the numbers behind it."""
    cls = result['class']
    feed = result['effective_mb_s']
    if cls == STREAMING:
        return 'STREAMING: the backup gets %s, the drive\'s full speed needs %s; %s' % (
            fmt_rate(feed), fmt_rate(need_full), backhitch_words(result))
    if cls == SPEED_MATCHED:
        return ('SPEED-MATCHED: the backup gets %s, between the %s floor and %s full speed: the drive slows down '
                'but keeps moving (%s)' % (fmt_rate(feed), fmt_rate(need_floor), fmt_rate(need_full),
                                           backhitch_words(result)))
    if cls == SHOE_SHINING:
        below = (', below the %s floor' % fmt_rate(need_floor)) if rounded_rate_below(feed, need_floor) else ''
        return 'SHOE-SHINING: %s; the backup gets %s%s' % (backhitch_words(result), fmt_rate(feed), below)
    return '%s: %s' % (cls, result.get('inconclusive_reason') or 'not enough data')


def _data_size(value):
    """A volume of data in decimal units, as the rates are (8 bytes, 12.3 kB, 64 MB)."""
    value = float(value)
    if value < 1e3:
        return '%d byte%s' % (value, _plural(int(value)))
    number, unit = (value / 1e3, 'kB') if value < 1e6 else (value / 1e6, 'MB')
    return '%s %s' % (('%.1f' % number).replace('.0', '') if number < 100 else '%.0f' % number, unit)


def _sizes_apart(measured, minimum):
    """Both volumes in words, in bytes when rounding would show them equal (no "256 MB, less than 256 MB")."""
    said = (_data_size(measured), _data_size(minimum))
    return said if said[0] != said[1] else ('%d bytes' % measured, '%d bytes' % minimum)


def too_little_data(short):
    """Why a source read is too little to judge (``_forecast.too_little_data``'s data): the minimum and what was
    measured, and what to do."""
    files = short.get('files')
    files_text = '' if files is None else ' in %d file%s' % (files, _plural(files))
    if short['measure'] == 'source_bytes':
        measured, minimum = _sizes_apart(short['measured'], short['minimum'])
        return ('the sources hold %s%s, less than the minimum of %s (the smallest LTO drive buffer): a backup that '
                'small fits in the drive\'s buffer, so the drive never waits on the sources and there is no '
                'streaming to judge; qualify with the backup\'s real sources' % (measured, files_text, minimum))
    if short['measure'] == 'bytes_read':
        seconds = short.get('seconds')
        measured, minimum = _sizes_apart(short['measured'], short['minimum'])
        return ('only %s was read%s%s, less than the minimum of %s (the smallest LTO drive buffer): rates of so '
                'little data are opening and first-read latency, not throughput; give a bigger tree or a longer '
                'time budget' % (measured, files_text, '' if seconds is None else ' in %.0f s' % seconds, minimum))
    samples = int(short['measured'])
    return ('the sources were read in %.0f s (%d per-second sample%s; %d needed): give a bigger tree or a longer '
            'time budget' % (short.get('seconds') or samples, samples, _plural(samples), short['minimum']))


# a forecast of a feed that delivered nothing (``_forecast.forecast``)
NO_DATA_DELIVERED = 'the sources delivered no data in the measured interval'

# an observed window (_judge/_observed)
OBSERVED_NO_COUNTER = ('the drive\'s own back-hitch counter is unknown for this model: the observed class is from '
                       'its rate alone, which cannot show a drive that stops now and then above its floor')


OBSERVED_SERIES_BROKEN = ('the window\'s series is not whole (its write_byte_cnt and seconds columns missing, of '
                          'different lengths or not numbers): watch the drive again with tape_drive_observe')


def backhitches_too_few(count, seconds, per_hour, low, confidence, line, cls):
    """Why a window's back-hitches did not make it SHOE-SHINING: too few to say a rate above the line."""
    return ('%d back-hitch%s in %.0f s of data is %.0f an hour as it stands, but could come from as few as %.0f an '
            'hour (%.0f %% confidence), under the %.0f an hour a drive that shoe-shines shows: too few to say so, '
            'and the class is %s by the rate; a longer window says more' % (
                count, '' if count == 1 else 'es', seconds, per_hour, low, 100.0 * confidence,
                line, cls))


def drive_paced(paced_s, seconds, mb_s, class_mb_s, full, ratio, cls, fill_s=0.0):
    """Why a window's class is not its fed rate's: the drive, never stopping, set the pace of some of its seconds,
    and what the host wrote while it filled the drive's buffer (``fill_s`` seconds past the rate's first) had not
    yet reached the tape."""
    parts = []
    if fill_s:
        parts.append('the rate the class is set against begins once the host had first waited on the drive, %.3g s '
                     'after the rate as fed begins: until then the host was filling the drive\'s buffer' % fill_s)
    if paced_s or not parts:
        parts.append('the drive set the pace for %.0f of the %.0f s the rate is taken over (the host waited on it, '
                     'or its full buffer fed it), taking at least its full speed at 1:1 and never stopping: those '
                     'seconds count at its full speed (%.2f MB/s of host data at %.3g:1), whatever the compression '
                     'of their data' % (paced_s, seconds, full, ratio))
    return ('%s. Counted so, the rate is %.2f MB/s and the class %s; as fed, %.2f MB/s at the window\'s mean '
            'compression' % ('; '.join(parts), class_mb_s, cls, mb_s))


def replay_kept_top_step(seconds, mb_s, full, cls):
    """Why a replay's class is not its mean rate's: its drive never left its top step nor stopped."""
    return ('the replayed drive ran at its top step for all %.0f s and never stopped, so the class is %s; the '
            'host\'s mean, %.2f MB/s, is below the drive\'s full speed (%.2f MB/s) only by what its buffer, full '
            'where the window began drive-bound, drained over so short a replay' % (seconds, cls, mb_s, full))


def observed_too_short(seconds, needed):
    """Why an observed window cannot be judged: the drive was written to for too short a time."""
    return ('the drive was written to for %.0f s only (%d s needed to judge): watch a longer job, or a window '
            'holding several' % (seconds, needed))


def inconclusive_words(reason):
    """A verdict's inconclusive reason in words: the source module's sentence, or the verdict's shortfall."""
    if isinstance(reason, dict):
        return too_little_data(reason)
    return reason


def summary(decision, fixes):
    """The verdict's one paragraph: the class in a sentence and the first fix."""
    cls, label = decision['class'], decision['drive_label']
    now, fixed = decision['forecast']['now'], decision['forecast']['after_setting_fixes']
    need_floor, need_full = now['need_floor_mb_s'], now['need_full_mb_s']
    feed = now['effective_mb_s']
    if cls == INCONCLUSIVE:
        head = 'Not enough data to judge %s: %s.' % (label, inconclusive_words(decision['inconclusive_reason']))
    elif cls == STREAMING:
        head = '%s streams: the backup gets %s, full speed needs %s.' % (label, fmt_rate(feed), fmt_rate(need_full))
    elif cls == SPEED_MATCHED:
        head = '%s speed-matches: the backup gets %s, below full speed (%s) but above the floor (%s).' % (
            label, fmt_rate(feed), fmt_rate(need_full), fmt_rate(need_floor))
    elif cls == SHOE_SHINING:
        head = '%s would shoe-shine: %s; the backup gets %s%s.' % (
            label, backhitch_words(now), fmt_rate(feed),
            (' (floor %s)' % fmt_rate(need_floor)) if rounded_rate_below(feed, need_floor) else '')
    else:
        head = '%s is held back by its settings: %s now (%s), %s after the setting fixes (%s).' % (
            label, now['class'], fmt_rate(feed), fixed['class'], fmt_rate(fixed['effective_mb_s']))
    if fixes:
        head += ' First fix: %s.' % fixes[0].title
    return head


# ---------------------------------------------------------------------------
# where to change a setting, per backup software


def setting(software, fix, value):
    """Where to change it, in the words of the backup software."""
    if (software, fix) in APPLICATION_SETTINGS:
        return APPLICATION_SETTINGS[(software, fix)](value)
    name = SOFTWARE_NAMES.get(software)
    bacula = software in ('bacula', 'bareos')
    if fix == 'block_size':
        if software == 'data_protector':
            return 'Data Protector device > Properties > Settings > Advanced > Sizes: Block size (kB) = %d' % (
                value // 1024)
        if bacula:
            return '%s storage daemon Device resource: Maximum Block Size = %d' % (name, value)
        if software == 'netbackup':
            return ('NetBackup media server: SIZE_DATA_BUFFERS = %d (/usr/openv/netbackup/db/config/SIZE_DATA_BUFFERS, '
                    'tapeops.qualify.netbackup_buffers)' % value)
        # an application not known: the st driver's words (docs/verdict.md, "Amanda, and an application not known")
        return ('st driver: %s blocks (tapeops.qualify.st_tuning checks that each drive\'s HBA path carries them and '
                'keeps st in variable-block mode, where each write of the application is one block: its write size, '
                'where it has a setting for it; in fixed-block mode st writes its own, mt defblksize %d, kept as a '
                'mode\'s blocksize in /etc/stinit.def)' % (fmt_bytes(value), value))
    if fix == 'immediate_filemarks':
        if software == 'data_protector':
            return 'omnirc on the Media Agent: OB2FORCESCSI=WFM and OB2IMMEDFM=1 (tapeops.qualify.dp_omnirc)'
        return 'immediate file marks (MTWEOFI) in the writer'
    if fix == 'segment_size':
        if software == 'data_protector':
            return 'Data Protector device > Advanced > Sizes: Segment size (MB) = %d' % value
        if bacula:
            return '%s Device resource: Maximum File Size = %dM' % (name, value)
        if software == 'netbackup':
            return 'NetBackup tape storage unit (on the primary server): Maximum Fragment Size = %d MB or more' % value
        return 'data between file marks: %d MB' % value
    if fix == 'job_size':
        return _job_size_setting(software, value)
    if fix == 'st_direct_io':
        # the st driver's, whatever the backup software
        return ('st module option max_sg_segs=%d: /etc/modprobe.d/st.conf where st is a module, st.max_sg_segs=%d on '
                'the kernel command line where it is built in (tapeops.qualify.st_tuning); st takes it when next '
                'loaded' % (value, value))
    if fix == 'streams':
        if software == 'data_protector':
            return 'Data Protector device or backup specification: Concurrency (Disk Agents) = %d' % value
        if bacula:
            return '%s: Maximum Concurrent Jobs = %d on the Storage and Device resources' % (name, value)
        if software == 'netbackup':
            return ('NetBackup: %d streams multiplexed into the drive (the storage unit\'s Maximum streams per drive '
                    'and the schedule\'s Media multiplexing)' % value)
        return '%d parallel backup streams into the drive' % value
    if fix == 'staging':
        if software == 'data_protector':
            return 'Data Protector: back up to a disk (B2D / file library) device, then object copy to tape'
        if bacula:
            return '%s Job: Spool Data = yes, Device: Spool Directory on a fast disk' % name
        if software == 'netbackup':
            return 'NetBackup: back up to a disk storage unit, then duplicate to tape (a storage lifecycle policy)'
        return 'back up to disk first, then copy to tape'
    return str(value)  # pragma: no cover


# ---------------------------------------------------------------------------
# facts (the verdict's reasons), one function per id


def _sources(f):
    return 'The sources deliver %s on average, %s sustained (5th percentile of %d per-second sample%s over %d ' \
           'stream%s%s)%s.' % (
               fmt_rate(f['mean_mb_s']), fmt_rate(f['sustained_mb_s']), f['samples'], _plural(f['samples']),
               f['streams'], _plural(f['streams']),
               ', %d pass%s' % (f['passes'], _plural(f['passes'], '', 'es')) if f['passes'] else '',
               '' if f['drives_sharing'] <= 1 else '; %d drives share them, this one gets %.0f %%: %s on average' % (
                   f['drives_sharing'], 100 * f['share'], fmt_rate(f['feed_mean_mb_s'])))


def _link_name(link):
    """'SAS 6.0 Gbit' / 'FC 8 Gbit' / 'HBA'."""
    words = ' '.join(str(link[k]) for k in ('transport', 'rate') if link.get(k))
    return words or 'HBA'


def _link(f):
    link = f['link']
    takes = '%s takes %s at %.2f:1 (its compressed maximum %s)' % (
        f['label'], fmt_rate(f['need_full_mb_s']), f['ratio'], fmt_rate(f['compressed_max_mb_s']))
    source = link.get('text') or 'sysfs'
    if f['state'] == 'caps_drive':
        return 'The %s link carries %s, below the %s: the link, not the sources (%s), caps the drive (%s).' % (
            _link_name(link), fmt_rate(f['link_mb_s']), takes, fmt_rate(f['feed_mean_mb_s']), source)
    if f['state'] == 'caps_sources_lower':
        return 'The %s link carries %s, below the %s; the sources (%s) are lower still, so they limit first (%s).' % (
            _link_name(link), fmt_rate(f['link_mb_s']), takes, fmt_rate(f['feed_mean_mb_s']), source)
    return 'The %s link carries %s, enough for the %s%s.' % (
        _link_name(link), fmt_rate(f['link_mb_s']), takes,
        '; data that compresses better would meet the link first' if f['compressed_max_mb_s']
        and f['link_mb_s'] < f['compressed_max_mb_s'] else '')


def _restore(f):
    return 'Read-back (restore) of the sweep\'s %.0f MB at %s: %s, against %s writing the same blocks; %s.' % (
        f['bytes'] / 1e6,
        'a %s read buffer' % fmt_bytes(f['read_size']) if f['read_size'] else 'the block sizes they were written with',
        fmt_rate(f['mb_s']), fmt_rate(f['write_mb_s']),
        'every block verified against the data written' if f['verified'] else 'NOT verified')


def _limiter(f):
    text = {'sources': 'the sources',
            'path': 'the drive path%s' % (' at %s blocks' % fmt_bytes(f['block_size']) if f['block_size'] else ''),
            'link': 'the %s link at %s' % (_link_name(f['link'] or {}), fmt_rate(f['link_mb_s']))}[f['limiter']]
    if f['filemark_segment_mb'] is not None:
        text += ' and synchronous file marks every %.0f MB' % f['filemark_segment_mb']
    return text


def _host_capacity(f):
    label = f['label']
    held = ' (each held to its %s link)' % fmt_rate(f['held_mb_s']) if f['held_mb_s'] else ''
    if not f['drives']:
        return 'The host\'s sources keep no %s drive from shoe-shining%s.' % (label, held)
    kept = ('%d %s drive%s streaming at once (%d from shoe-shining)' % (
        f['streaming'], label, _plural(f['streaming']), f['not_shoeshining'])
        if f['streaming'] else
        'no %s drive streaming at full speed, %d speed-matched at once' % (label, f['not_shoeshining']))
    return 'The host\'s sources keep %s%s; at %d drive%s (%d stream%s, at least one per drive) the memory rule ' \
           'asks %s; %s.' % (kept, held, f['drives'], _plural(f['drives']), f['streams'], _plural(f['streams']),
                             memory_rule(f['memory']), _have(f['memory']))


def memory_rule(m):
    """'512 MB base + 512 MB x 3 streams = 2048 MB'."""
    return '%d MB base + %d MB x %d stream%s = %d MB' % (
        m['base_mb'], m['per_stream_mb'], m['streams'], _plural(m['streams']), m['needed_mb'])


def _have(m):
    if m['total_mb'] is None:
        return 'the host\'s RAM is not known'
    if m['short_mb']:
        return 'the host has %d MB, %d MB short' % (m['total_mb'], m['short_mb'])
    return 'the host has %d MB' % m['total_mb']


# What source_read_benchmark passes over (_source_tree.SKIP_REASONS), counted: (one, many)
PASSED_OVER = {
    'fifo': ('FIFO', 'FIFOs'), 'socket': ('socket', 'sockets'),
    'char_device': ('character device node', 'character device nodes'),
    'block_device': ('block device node', 'block device nodes'),
    'symlink': ('symbolic link (not followed)', 'symbolic links (not followed)'),
    'symlink_loop': ('symbolic link loop', 'symbolic link loops'),
    'broken_symlink': ('broken symbolic link', 'broken symbolic links'),
    'permission_denied': ('entry that could not be opened (permission denied)',
                          'entries that could not be opened (permission denied)'),
    'unreadable': ('file that could not be opened', 'files that could not be opened'),
    'other_filesystem': ('other filesystem below a source (one_file_system)',
                         'other filesystems below a source (one_file_system)'),
    'vanished': ('entry that vanished while walked', 'entries that vanished while walked'),
    'hardlink': ('hard link to a file already read', 'hard links to files already read'),
    'max_files': ('file beyond max_files', 'files beyond max_files'),
}


def _passed_over(f):
    parts = []
    for kind, count in sorted(f['counts'].items(), key=lambda item: (-item[1], item[0])):
        one, many = PASSED_OVER.get(kind, (kind, kind))
        parts.append('%d %s' % (count, one if count == 1 else many))
    return ('Not read from the sources: %s (each with its path and reason in the host document\'s '
            'source.passed_over).' % ', '.join(parts))


def _jobs(f):
    """The 'jobs' fact: the application's jobs on one volume, each closed by a synchronous file mark."""
    size = _volume_mb(f['job_size_mb'])
    cost = ('%.1f s each, as the write test measured one' % f['mark_s'] if f.get('mark_s') is not None
            else 'each a reposition at the drive model\'s cost')
    gap = ', then %.0f s with no data before the next job starts' % f['job_gap_s'] if f.get('job_gap_s') else ''
    count = ''
    if f.get('job_marks') is not None and f.get('seconds'):
        count = ' (%d in the forecast\'s %.0f s)' % (f['job_marks'], f['seconds'])
    return ('Jobs of %s (job_size_mb in the inventory): the application ends each with a synchronous file mark '
            'whatever its file-mark setting%s, %s%s; the forecasts include them.' % (size, count, cost, gap))


def _segment_default(f):
    if f['software'] in ('bacula', 'bareos'):
        return ('No Maximum File Size was given (tapeops_backup.segment_size_mb), so the forecast models the %s: '
                'a synchronous file mark every %.0f MB (Maximum File Size = 1000000000 bytes); set segment_size_mb '
                'to the Device resource\'s Maximum File Size where it differs.' % (
                    segment_default_words(f['software']), f['segment_mb']))
    if f['software'] == 'netbackup':
        return ('No fragment size was given (tapeops_backup.segment_size_mb), so the forecast models the %s: a '
                'synchronous tape mark every %.0f MB (a tape storage unit\'s Maximum Fragment Size, 1048576 '
                'megabytes), and one after each backup image; set segment_size_mb to the storage unit\'s Maximum '
                'Fragment Size where it differs.' % (segment_default_words(f['software']), f['segment_mb']))
    return ('No segment size was given (tapeops_backup.segment_size_mb), so the forecast models the %s: a file mark '
            'every %.0f MB, synchronous unless immediate file marks are on; set segment_size_mb to the device\'s '
            'segment size where it differs.' % (segment_default_words(f['software']), f['segment_mb']))


def _sd_value(entry):
    """A Device setting's value as it matters to the drive: the block size, or how often a mark is written."""
    value = entry['value']
    if entry['key'] == 'block_size_bytes':
        return '%s blocks' % fmt_bytes(value)
    return 'a synchronous file mark every %.0f MB' % (value / 1e6)


def _sd_setting(entry):
    """One setting of the drive's Device: as set (line), its default (source), unknown, refused; overridden."""
    name = entry['directive']
    where = entry.get('where') or ''
    line = ' (line %s)' % where.rsplit(':', 1)[-1] if ':' in where else ''
    if entry.get('error'):
        text = '%s = %s%s is not taken: %s' % (name, entry.get('text'), line, str(entry['error']).rstrip('.'))
    elif entry.get('source') == 'configuration':
        text = '%s = %s%s: %s' % (name, entry.get('text'), line, _sd_value(entry))
    elif entry.get('value') is None:
        text = '%s is not set and its default is not known (%s)' % (name, str(entry.get('basis')).rstrip('.'))
    else:
        text = '%s is not set: the default, %d bytes (%s): %s' % (name, entry['value'], entry.get('basis'),
                                                                  _sd_value(entry))
    if entry.get('overridden_by'):
        text += '; the inventory\'s %s is used instead' % entry['overridden_by']
    return text


def _not_read(items):
    return '; '.join('%s (%s)' % (n.get('path'), n.get('reason')) for n in items or [])


def _sd_config(f):
    """The ``sd_config`` fact: what the storage daemon's configuration says for this drive (``_backup_settings``)."""
    who = '%s storage daemon\'s configuration' % SOFTWARE_NAMES.get(f.get('software'))
    skipped = ' Not read: %s.' % _not_read(f['not_read']) if f.get('not_read') else ''
    if f['status'] == 'not_read':
        # the error already says why the first file was not read
        more = skipped if len(f.get('not_read') or []) > 1 else ''
        return ('The %s (%s) was not read: %s; the drive\'s settings come from the inventory or the defaults.%s' % (
            who, f.get('config_path'), str(f.get('error')).rstrip('.'), more))
    if f['status'] == 'no_device':
        devices = ', '.join('%s (%s%s)' % (d.get('name'), d.get('archive_device'),
                                           ': %s' % d['note'] if d.get('note') else '')
                            for d in f.get('devices') or []) or 'none'
        return ('No tape Device of the %s (%s) has %s as its Archive Device (the tape Devices there: %s); the '
                'drive\'s settings come from the inventory or the defaults.%s' % (
                    who, ', '.join(f.get('files') or []), f.get('nst'), devices, skipped))
    others = (' Device%s %s also use%s this drive; the first one is read.' % (
        _plural(len(f['others'])), ', '.join('"%s"' % o for o in f['others']), '' if len(f['others']) > 1 else 's')
        if f.get('others') else '')
    return 'From the %s, Device "%s" (Archive Device %s) in %s: %s.%s%s' % (
        who, f.get('device'), f.get('archive_device'), f.get('file'),
        '; '.join(_sd_setting(e) for e in f.get('settings') or []), others, skipped)


def _nb_file(entry):
    """One NetBackup buffer file as bptm reads it: its number, the default, or why bptm would not take it."""
    name = entry.get('name')
    if entry.get('error'):
        return '%s is not taken (%s); what bptm uses instead is in its log' % (name, str(entry['error']).rstrip('.'))
    if entry.get('source') == 'configuration':
        text = '%s = %s' % (name, entry.get('text'))
        if entry.get('note'):
            text += ' (%s)' % str(entry['note']).rstrip('.')
        return text
    return '%s has no file: the default, %d (%s)' % (name, entry['value'], str(entry.get('basis')).rstrip('.'))


def _nb_files(entries):
    """The buffer files in words; files without one and without a known default share one clause per basis."""
    out, unknown = [], []
    for entry in entries:
        if entry.get('error') or entry.get('source') == 'configuration' or entry.get('value') is not None:
            out.append(_nb_file(entry))
            continue
        for names, basis in unknown:
            if basis == entry.get('basis'):
                names.append(entry.get('name'))
                break
        else:
            unknown.append(([entry.get('name')], entry.get('basis')))
    for names, basis in unknown:
        many = len(names) > 1
        out.append('%s %s no file and %s default is not known (%s)' % (
            ' and '.join(names), 'have' if many else 'has', 'their' if many else 'its', str(basis).rstrip('.')))
    return '; '.join(out)


def _nb_buffering(f):
    """What NUMBER_DATA_BUFFERS x SIZE_DATA_BUFFERS hold, against the drive's own buffer and its full-speed feed."""
    total = f.get('shared_memory_bytes')
    if not total:
        return (' The shared memory of the data buffers is not known (NUMBER_DATA_BUFFERS x SIZE_DATA_BUFFERS '
                'needs both).')
    text = ' The data buffers are %d x %s = %s of shared memory for each drive (for each multiplexed stream' % (
        f['number_data_buffers'], fmt_bytes(f['size_data_buffers']), fmt_bytes(total))
    text += ', NetBackup Backup Planning and Performance Tuning Guide, "Amount of shared memory required by NetBackup")'
    parts = []
    mb = total / 1e6
    need, buffer_mb = f.get('need_full_mb_s'), f.get('drive_buffer_mb')
    if need:
        parts.append('%.2f s of the drive\'s full-speed feed (%s)' % (mb / need, fmt_rate(need)))
    if buffer_mb:
        parts.append('%.0f %% of the drive\'s own %.0f MB buffer' % (100.0 * mb / buffer_mb, buffer_mb))
    if parts:
        text += ': ' + ' and '.join(parts)
    return text + '. The forecast models the drive\'s buffer; NetBackup\'s buffers are not added to it.'


def _netbackup_config(f):
    """The ``netbackup_config`` fact: the media server's buffer files, and the block size they give this drive."""
    if f['status'] == 'not_read':
        return ('The NetBackup media server\'s buffer files (%s) were not read: %s; the drive\'s block size comes '
                'from the inventory or the drive.' % (f.get('netbackup_dir'), str(f.get('error')).rstrip('.')))
    used = ''
    for entry in f.get('settings') or []:
        if entry.get('overridden_by'):
            used += ' The inventory\'s %s is used instead of %s.' % (entry['overridden_by'], entry['directive'])
        elif entry.get('used'):
            used += ' bptm writes %s blocks to this drive (%s).' % (
                fmt_bytes(entry['value']), 'SIZE_DATA_BUFFERS' if entry.get('source') == 'configuration' else
                'NetBackup\'s default')
    return 'From the NetBackup media server\'s buffer files (%s): %s.%s%s' % (
        f.get('netbackup_dir'), _nb_files(f.get('files') or []), used, _nb_buffering(f))


OBSERVE_RUN_EXAMPLE = 'reports/observe-20261127T220000Z'


def _not_watched_in(f):
    watched = f.get('watched') or []
    return 'observe run %s did not watch %s (%s): watch it in an observe run while a backup writes to it' % (
        f['run'], f['drive'], 'it watched %s' % ', '.join(watched) if watched else 'it watched no drive of this host')


def _what_if_ratio(f):
    measured = f.get('measured') or []
    if not measured:
        return ('the target drive is not installed, so observe run %s did not watch it, and no drive of this host '
                'measured its own ratio there' % f['run'])
    return ('the target drive is not installed, so observe run %s did not watch it; this host\'s drives measured %s '
            'there: set qualify_verdict_options.tape_ratio to judge the target with that ratio' % (
                f['run'], ', '.join('%.2f (%s)' % (ratio, drive) for drive, ratio in measured)))


def _unusable_document(f):
    return 'the observe run\'s document of this host cannot be used: %s' % str(f.get('detail')).rstrip('.')


RATIO_UNUSED = {
    'no_directory': lambda f: '%s does not exist: run the observe playbook first (ansible-playbook '
                              'tapeops.qualify.observe), or give qualify_tape_ratio_from the directory of an observe '
                              'run, for example %s' % (f['run_dir'], OBSERVE_RUN_EXAMPLE),
    'not_a_directory': lambda f: '%s is a file, not a directory: give qualify_tape_ratio_from the directory of an '
                                 'observe run, for example %s' % (f['run_dir'], OBSERVE_RUN_EXAMPLE),
    'not_a_run': lambda f: '%s holds no host documents (hosts/), so it is not a run\'s directory: give '
                           'qualify_tape_ratio_from the directory of an observe run, for example %s' % (
                               f['run_dir'], OBSERVE_RUN_EXAMPLE),
    'no_document': lambda f: 'the run in %s has no document of this host (%s): observe this host (ansible-playbook '
                             'tapeops.qualify.observe -l %s) and give that run' % (
                                 f['run_dir'], f.get('path'), f.get('host') or '<host>'),
    'unreadable': _unusable_document,
    'schema': _unusable_document,
    'not_observe': lambda f: '%s is not an observe run\'s document (it holds no observed drives): give '
                             'qualify_tape_ratio_from the directory of an observe run (playbooks/observe.yml writes '
                             'one), for example %s' % (f.get('path'), OBSERVE_RUN_EXAMPLE),
    'not_watched': _not_watched_in,
    'idle': lambda f: '%s wrote nothing while observe run %s watched it (idle): watch it in an observe run while a '
                      'backup writes to it' % (f['drive'], f['run']),
    'not_judged': lambda f: '%s was not judged in observe run %s%s' % (
        f['drive'], f['run'], ': %s' % str(f['detail']).rstrip('.') if f.get('detail') else ''),
    'not_observed': lambda f: '%s was not watched in observe run %s%s' % (
        f['drive'], f['run'], ': %s' % str(f['detail']).rstrip('.') if f.get('detail') else ''),
    'not_measured': lambda f: '%s did not measure its compression in observe run %s (the ratio there: %s), so '
                              'that run has no ratio of its own for it: set qualify_verdict_options.tape_ratio if '
                              'you know it' % (
                                  f['drive'], f['run'], TAPE_RATIO_SOURCES.get(f.get('source'), f.get('source'))),
    'what_if': _what_if_ratio,
    'tape_ratio_set': lambda f: 'the drive measured %.2f itself in observe run %s%s, but tape_ratio is set (%.2f) and '
                                'comes first: leave qualify_verdict_options.tape_ratio unset to judge with the '
                                'drive\'s ratio' % (
                                    f['measured'], f['run'],
                                    ', Bacula job %s' % f['jobid'] if f.get('jobid') is not None else '',
                                    f['tape_ratio']),
}


def _ratio_observed_unused(f):
    """Why the ratio the drive measured in an observe run (qualify_tape_ratio_from) is not the verdict's."""
    words = RATIO_UNUSED.get(f.get('why')) or (lambda f: str(f.get('detail') or 'no reason given').rstrip('.'))
    return "The drive's own tape ratio (qualify_tape_ratio_from) is not used: %s." % words(f)


def _btape_run(f):
    """What btape measured: its test, block size and rate."""
    return 'btape (the storage daemon\'s own writer) wrote %s data%s with %s blocks at %s%s' % (
        f['data'], ' in its block structure' if f.get('structure') == 'block' else ' as raw blocks',
        fmt_bytes(f['block_size']) if f.get('block_size') else 'its', fmt_rate(f['btape_mb_s']),
        ' (btape: %s)' % '; '.join(str(e).rstrip('.') for e in f['errors']) if f.get('errors') else '')


def _btape_apart(f):
    pct = f['delta_pct']
    return '%.0f %% %s' % (abs(pct), 'faster' if pct > 0 else 'slower')


def _btape(f):
    """The btape fact: btape's rate beside the sweep's at its block size, or why they cannot be compared."""
    if f.get('why') == 'zero_data':
        return '%s. The drive compresses zeros, so no sweep pattern matches them: run btape_speed with tests ' \
               '[random_block] to set it against the sweep.' % _btape_run(f)
    if f.get('why') == 'no_block_size':
        return '%s; its output names no block size, so it is not set against the sweep.' % _btape_run(f)
    if f.get('why') == 'no_sweep':
        return '%s; there is no write sweep of incompressible data to set it against.' % _btape_run(f)
    return '%s; the write sweep\'s drive path there is %s (%s): btape is %s.' % (
        _btape_run(f), fmt_rate(f['sweep_mb_s']), basis(f['sweep_basis']), _btape_apart(f))


def _btape_disagrees(f):
    """btape and the sweep differ by more than the threshold: what could explain it."""
    text = 'btape and the write sweep disagree on the drive path by more than %.0f %%: btape %s at %s, the sweep %s ' \
           '(btape is %s).' % (f['limit_pct'], fmt_rate(f['btape_mb_s']), fmt_bytes(f['block_size']),
                               fmt_rate(f['sweep_mb_s']), _btape_apart(f))
    if f.get('step_mb') and f['delta_pct'] < 0:
        return text + (' The sweep\'s steps of %.0f MB are no more than twice the drive\'s %.0f MB buffer, so they '
                       'measured the host filling the buffer as much as the drive: run the sweep with longer steps '
                       '(the profile\'s step_mb) before trusting its rate.' % (f['step_mb'], f['buffer_mb']))
    if f['delta_pct'] < 0:
        return text + (' The storage daemon\'s writer is slower than a plain write on the same path: its CPU cost '
                       '(block structure, checksums) or the end of the cartridge (btape\'s errors) can hold it '
                       'back, and a backup through it is then held back the same way.')
    return text + (' btape is faster than the sweep: the sweep was held back (another user of the drive or the host, '
                   'a short step); re-run it before trusting its rate.')


def _ratio_profile(f):
    """The sources' compressibility along their stream, as the forecast replays it."""
    text = ('The sources\' compressibility varies along their stream: the sample\'s %d windows come to %.2f:1 to '
            '%.2f:1 on tape (%.2f:1 over the whole stream), and the forecast replays each stretch at its own ratio'
            % (f['windows'], f['low'], f['high'], f['ratio']))
    if f.get('need_floor_high_mb_s'):
        text += ('; the most compressible stretch needs %s to keep the drive above its floor while it passes'
                 % fmt_rate(f['need_floor_high_mb_s']))
    return text + '.'


FACTS = {
    'sources': _sources,
    'btape': _btape,
    'btape_not_run': lambda f: 'btape\'s speed test did not run on this drive: %s.' % str(
        f.get('msg') or f.get('reason') or 'no reason given').rstrip('.'),
    'ratio_observed_unused': _ratio_observed_unused,
    'ratio_profile': _ratio_profile,
    'passed_over': _passed_over,
    'file_sizes': lambda f: str(f['text']).rstrip('.') + '.',
    'ingest': lambda f: 'With competing ingest (%s) the sources gave %s, against %s without it.' % (
        f['target_text'] or 'as configured', fmt_rate(f['with_mb_s']), fmt_rate(f['without_mb_s'])),
    'need_full': lambda f: 'Full speed for %s needs %s: %s native x %.2f tape compression (%s)%s.' % (
        f['label'], fmt_rate(f['need_full_mb_s']), fmt_rate(f['native_mb_s']), f['ratio'], basis(f['ratio_basis']),
        ', capped by what its interface sustains' if f['interface_caps'] else ''),
    'need_floor': lambda f: 'Its slowest speed-matching step, %s, needs %s (%s x %.2f)%s; below that the drive stops '
                            'and repositions (shoe-shining).' % (
                                fmt_rate(f['floor_mb_s']), fmt_rate(f['need_floor_mb_s']), fmt_rate(f['floor_mb_s']),
                                f['ratio'], ' (an estimate: %s)' % f['estimate'] if f['estimate'] else ''),
    'sweep': lambda f: 'The write sweep measured the drive path at %s (%s data).' % (
        ', '.join('%s %s' % (fmt_bytes(s), fmt_rate(r)) for s, r in f['rates']), _ratio_text(f['pattern_ratio'])),
    'what_if_not_installed': lambda f: 'What-if for %s: the drive is not installed, so only the sources are measured '
                                       'against its needs.' % f['label'],
    'no_sweep': lambda f: 'The drive path was not measured (no write sweep: no scratch medium allowed or the write '
                          'test was skipped); the verdict rests on the sources alone.',
    'link': _link,
    'link_text': lambda f: 'HBA link: %s.' % str(f['text']).rstrip('.'),
    'drive_backhitches': lambda f: 'During the write benchmark (block-size sweep and file-mark tests) the drive itself '
                                   'reported %d back-hitch%s (LOG SENSE page %s, parameter %s).' % (
                                       f['count'], _plural(f['count'], '', 'es'), _sg_logs.BACKHITCH_PAGE,
                                       _sg_logs.BACKHITCH_PARAMETER),
    'restore': _restore,
    'block_size_unknown': lambda f: 'The block size in use is not known (set tapeops_backup.block_size_bytes or the '
                                    'drive\'s block_size_bytes to judge it); the sweep recommends %s.' % fmt_bytes(
                                        f['recommended']),
    'segment_default': _segment_default,
    'jobs': _jobs,
    'sd_config': _sd_config,
    'netbackup_config': _netbackup_config,
    'inconclusive': lambda f: 'Not enough to judge: %s.' % inconclusive_words(f['reason']),
    'forecast_now': lambda f: 'The forecast at the current settings (%s limiting): %s.' % (
        _limiter(f), class_words(f['forecast'], f['need_floor_mb_s'], f['need_full_mb_s'])),
    'forecast_fixed': lambda f: 'With the setting fixes: %s.' % class_words(f['forecast'], f['need_floor_mb_s'],
                                                                            f['need_full_mb_s']),
    'host_capacity': _host_capacity,
    'drives_kept_busy': lambda f: 'The host\'s sources, shared, keep %d %s drive%s streaming at once and %d from '
                                  'shoe-shining.' % (f['streaming'], f['label'], _plural(f['streaming']),
                                                     f['not_shoeshining']),
}


# ---------------------------------------------------------------------------
# findings, one function per id


def _volume(value):
    """A volume of data in decimal MB (as the rates are), '?' when unknown."""
    return '%.1f MB' % (int(value) / 1e6) if value is not None else '?'


def _users(users):
    return ', '.join('%s (pid %s, %s)' % (u.get('command') or '?', u.get('pid'), u.get('node')) for u in users or [])


def _contended(f):
    """The 'contended' finding: what others did to the measurements, with the numbers."""
    parts = []
    src = f.get('sources')
    if src:
        parts.append('others read %s from the sources\' devices while this run read %s' % (
            _volume(src.get('others_read_bytes')), _volume(src.get('ours_read_bytes'))))
    drv = f.get('drive')
    if drv:
        if drv.get('others_written_bytes') or drv.get('others_read_bytes'):
            parts.append('the drive\'s st counters moved %s written and %s read beyond this run\'s %s' % (
                _volume(drv.get('others_written_bytes') or 0), _volume(drv.get('others_read_bytes') or 0),
                _volume(drv.get('ours_written_bytes') or 0)))
        if drv.get('users'):
            parts.append('%s had the drive open' % _users(drv['users']))
    return ('Measured under contention: %s. The rates are what was left to this run, lower than the host gives '
            'alone; re-run when no backup or other run uses the drive or the sources.' % '; '.join(parts))


# storage daemons that hold their drives open while idle (Bacula/Bareos Device resource, Always Open)
STORAGE_DAEMONS = ('bacula-sd', 'bareos-sd')


def busy(device, state):
    """The sentence of a BUSY drive (``_verdict.busy_state``): who has it, and what to do."""
    reason = state.get('reason')
    holder = state.get('holder') or {}
    if reason == 'locked':
        who = 'another qualify run holds it (run %s from %s, process %s, since %s; its lease ends %s)' % (
            holder.get('run_id') or '?', holder.get('controller') or '?', holder.get('controller_pid') or '?',
            holder.get('started') or '?', holder.get('expires') or '?')
        then = ('Re-run this host when that run has ended; a lease left by a killed run ends by itself at its '
                'expiry (docs/usage.md, "One run per drive").')
    elif reason == 'open' and state.get('users'):
        who = '%s had it open (a backup or a tool is using it)' % _users(state['users'])
        daemons = sorted(set(u.get('command') for u in state['users'] if u.get('command') in STORAGE_DAEMONS))
        if daemons:
            # bacula-sd / bareos-sd keep a drive open while idle (Always Open = yes, their default)
            then = ('%s keeps the drive open between jobs (Always Open = yes is its default): unmount it there '
                    'first (bconsole: unmount storage=<its Storage>, which closes the device), re-run this host, '
                    'then mount it again.' % ' and '.join(daemons))
        else:
            then = 'Re-run this host when that has finished.'
    else:
        who = 'it could not be opened: another process had it open (st allows one open at a time)'
        then = 'Re-run this host when the backup or tool using it has finished.'
    return 'BUSY: %s was not measured and has no verdict: %s. %s' % (device, who, then)


# ---------------------------------------------------------------------------
# a drive or a host without a verdict (_judge._host)

NO_DRIVE = 'No tape drive found on this host (tape_drive_info found none and tapeops_drives lists none).'
NO_SOURCE = 'No source read result: the source test failed or was skipped, so no verdict is possible.'
# why the write test says a drive hung (_host._write_hung's ids)
HUNG = {
    # async_wrapper ended the job: it outlived its time limit
    'write_time_limit': lambda h: 'the write test did not end within its time limit (qualify_write_timeout): a tape '
                                  'operation waits on the drive.',
    'op_deadline': lambda h: str(h.get('msg') or 'a tape operation did not finish within its deadline (op_timeout).'),
}


def not_discovered(device):
    """A drive the inventory lists that discovery did not find."""
    return ('%s is listed in tapeops_drives but discovery did not find it: check the cabling, the st driver and the '
            'path.' % device)


def not_answering(device, hung):
    """A drive that hung: ``hung`` is discovery's own sentence, or the write test's (``HUNG`` by its id)."""
    why = HUNG[hung['id']](hung) if isinstance(hung, dict) else str(hung)
    return ('%s does not answer: %s It has no verdict. Check the drive and its path (dmesg, the drive\'s panel, the '
            'HBA), then re-run this host.' % (device, why.rstrip('.') + '.'))


def generation_unknown(device, reason):
    """A drive the resolver cannot name (``_resolve``'s reason): what to set."""
    return ('Cannot tell the LTO generation of %s: %s; set generation (e.g. "LTO-7") for it in tapeops_drives in the '
            'inventory.' % (device, reason))


FINDINGS = {
    'small_file_bound': lambda f: str(f['text']),
    'btape_disagrees': _btape_disagrees,
    'block_size_over_limit': lambda f: 'The configured block size %s is larger than %s (%s): writes fail with '
                                       '"Invalid argument".' % (fmt_bytes(f['block_size']), LIMITS[f['limit_source']],
                                                                fmt_bytes(f['limit'])),
    'block_size_not_measured': lambda f: 'The sweep did not measure %s blocks; the drive path there is %s: %s. Add '
                                         'the size to the sweep (tape_write_benchmark block_sizes) to measure it.' % (
                                             fmt_bytes(f['block_size']), fmt_rate(f['path_mb_s']), basis(f['basis'])),
    'read_back_not_verified': lambda f: 'The read-back did not return what was written: %d block(s) differ%s. Check '
                                        'the drive, the HBA and the cabling (dmesg, sg_logs -a) before trusting '
                                        'restores from this path.' % (
                                            f['mismatched_blocks'], '; %s' % f['error'] if f['error'] else ''),
    'settings_limit_feed': lambda f: 'The settings hold the drive back: %s now (%s), %s after the setting fixes '
                                     '(%s).' % (f['class_now'], fmt_rate(f['now_mb_s']), f['class_fixed'],
                                                fmt_rate(f['fixed_mb_s'])),
    'job_boundaries_limit': lambda f: 'The application\'s job boundaries hold the drive back: with jobs of %s, each '
                                      'closed by a synchronous file mark%s, the forecast is %s (%s); the same data '
                                      'as one stream would be %s (%s).' % (
                                          _volume_mb(f['job_size_mb']),
                                          ' and %.0f s apart' % f['job_gap_s'] if f.get('job_gap_s') else '',
                                          f['class_now'], fmt_rate(f['now_mb_s']), f['class_alone'],
                                          fmt_rate(f['alone_mb_s'])),
    'occasional_backhitches': lambda f: 'The forecast has the drive back-hitch %.0f times an hour (fewer than the '
                                        '%.0f that count as shoe-shining).' % (f['per_hour'],
                                                                               f['shoeshine_per_hour']),
    'no_physics': lambda f: 'The drive path rate (up to %s) came from a device without tape physics (tapeops_drives '
                            'physics: false, such as mhvtl): it measures this machine, not a tape drive, and the '
                            'class that rests on it says nothing about a real drive.' % fmt_rate(f['path_mb_s']),
    'estimated_buffer_mb': lambda f: 'The drive model\'s buffer %.0f MB is an estimate: %s.' % (f['value'], f['basis']),
    'estimated_backhitch_s': lambda f: 'The drive model\'s back-hitch %.1f s is an estimate: %s.' % (
        f['value'], f['basis']),
    'estimated_sync_mark_s': lambda f: 'The write test measured no synchronous file mark, so each costs the drive '
                                       'model\'s %.1f s beyond the buffer drain, an estimate: %s.' % (
                                           f['value'], f['basis']),
    'memory_at_concurrency': lambda f: 'Running %d %s drives at once needs %d MB by the memory rule (%s); the host has '
                                       '%d MB.' % (f['drives'], f['label'], f['memory']['needed_mb'],
                                                   memory_rule(f['memory']), f['memory']['total_mb']),
    'object_size_below_90': lambda f: 'Library and drive mechanics: %s' % f['text'],
    'contended': _contended,
    'health_likely_cause': lambda f: (
        'The write test took at most %s of %s data, below the %s the drive itself takes of it, and the drive\'s '
        'health is %s: its health is the likely cause, so its health fixes come first, before any source or '
        'setting fix.' % (fmt_rate(f['path_mb_s']), _ratio_text(f['pattern_ratio']), fmt_rate(f['drive_takes_mb_s']),
                          f['status'])),
    'mechanics_cartridge_not_restored': lambda f: (
        'The mechanics benchmark could not put %s back where it started (%s): put it back by hand before the next '
        'backup.' % (f['barcode'] or 'the cartridge', f['final_location'] or 'unknown')),
}

LIMITS = {'drive': "the drive's READ BLOCK LIMITS maximum", 'hba': "the HBA's maximum transfer"}


def finding(data):
    """The ``_records.Finding`` (id, severity, text) of a finding decided as data."""
    return _records.Finding(id=data['id'], severity=data['severity'], text=FINDINGS[data['id']](data))


# ---------------------------------------------------------------------------
# fixes: title, where to set it, why; one function per id


def _block_size(fix, d, now):
    why = 'The drive path took %s at %s against %s at %s%s; the forecast: %s.' % (
        fmt_rate(d['best_mb_s']), fmt_bytes(fix['value']), fmt_rate(d['path_mb_s']),
        fmt_bytes(d['block_size']) if d['block_size'] else 'the current block size',
        ' (limit: %s, %s)' % (fmt_bytes(d['limit']), LIMITS[d['limit_source']]) if d['limit'] else '',
        compare_words(now, fix['forecast']))
    return 'Use %s tape blocks' % fmt_bytes(fix['value']), setting(d['software'], 'block_size', fix['value']), why


def _st_direct_io(fix, d, now):
    why = ('st sends a block straight from the application\'s buffer only when its pages fit one command: at most %d '
           'pages of %s (st max_sg_segs %d, below the HBA\'s sg_tablesize %d), %s. A %s block is copied through '
           'st\'s own driver buffer instead: every byte once more, in large contiguous allocations that fail '
           '(EOVERFLOW) on a host whose memory is fragmented. max_sg_segs=%d (the block\'s pages and one more, for '
           'a buffer that does not start on a page) lets it go directly; the write test measured it with the copy, '
           'so no rate is forecast for this fix.' % (
               d['now_max_sg_segs'], fmt_bytes(d['page_size']), d['now_max_sg_segs'], d['sg_tablesize'],
               fmt_bytes(d['direct_io_max_bytes']), fmt_bytes(d['block_size']), d['max_sg_segs']))
    return ('Let st send %s blocks without copying them (max_sg_segs=%d)' % (
        fmt_bytes(d['block_size']), d['max_sg_segs']), setting(d['software'], 'st_direct_io', d['max_sg_segs']), why)


def segment_default_words(software):
    """'Data Protector default': a segment size the inventory did not give (``_verdict.DEFAULT_SEGMENT_MB``)."""
    return '%s default' % SOFTWARE_NAMES.get(software)


def _segment_basis(d):
    """' (the Data Protector default)' after a segment size that is the application's default, else ''."""
    return ' (the %s)' % segment_default_words(d['software']) if d.get('segment_basis') in (
        'default', 'sd_default') else ''


def setting_source_note(basis, software, file_name=None):
    """What the fleet table says after a setting, by where it came from (``numbers``' *_basis), or ''.

    ``default``: the application's default (no configuration read); ``sd_config``: the storage daemon's file;
    ``sd_default``: its default, the file setting none; the inventory and the drive's own block size: ''.
    """
    name = file_name.rsplit('/', 1)[-1] if file_name else 'the storage daemon configuration'
    if basis == 'default':
        return segment_default_words(software)
    if basis == 'sd_config':
        return name
    if basis == 'sd_default':
        return '%s, %s sets none' % (segment_default_words(software), name)
    if basis == 'netbackup_config':
        return file_name.rsplit('/', 1)[-1] if file_name else 'SIZE_DATA_BUFFERS'
    if basis == 'netbackup_default':
        return 'NetBackup default, no %s file' % (file_name.rsplit('/', 1)[-1] if file_name else 'SIZE_DATA_BUFFERS')
    return ''


def _immediate_filemarks(fix, d, now):
    why = 'Every %.0f MB segment%s ends with a synchronous file mark that empties the drive buffer and costs a ' \
          'reposition (%s); the forecast: %s.' % (
              d['segment_mb'], _segment_basis(d),
              '%.2f s measured per mark' % d['mark_s'] if d['mark_s'] is not None else
              'not measured: the model\'s flush and its estimated cost of a synchronous mark',
              compare_words(now, fix['forecast']))
    return ('Write file marks without waiting (immediate file marks)',
            setting(d['software'], 'immediate_filemarks', True), why)


def _segment_size(fix, d, now):
    why = 'A synchronous file mark every %.0f MB%s: %s; at %.0f MB the marks cost under %.0f %% of the time (the ' \
          'forecast: %s).' % (d['segment_mb'], _segment_basis(d), backhitch_words(now), d['recommended_mb'],
                              100 * d['loss_target'], compare_words(now, fix['forecast']))
    title = '%s (%.0f MB or more between file marks)' % (
        SEGMENT_TITLES.get(d['software'], 'Write larger segments'), d['recommended_mb'])
    return title, setting(d['software'], 'segment_size', fix['value']), why


def _job_size_setting(software, value):
    """Where the job size is changed, in the words of the backup software: its schedule, never a role."""
    if software == 'data_protector':
        return ('Data Protector backup specifications: fewer, larger sessions on each medium, %s or more each (the '
                'objects of small specifications in one)' % _volume_mb(value))
    if software in ('bacula', 'bareos'):
        return '%s Job and Schedule resources: fewer, larger jobs on each volume, %s or more each' % (
            SOFTWARE_NAMES.get(software), _volume_mb(value))
    if software == 'netbackup':
        return 'NetBackup policies: fewer, larger backup images on each tape, %s or more each' % _volume_mb(value)
    return 'fewer, larger backup jobs on each volume: %s or more each' % _volume_mb(value)


def _volume_mb(mb):
    """A job's size: '2000 MB', '515 GB' (from 10 GB on)."""
    return '%.0f MB' % mb if mb < 10000 else '%.0f GB' % (mb / 1000.0)


def _job_size(fix, d, now):
    gap = ' and, after the %.0f s between jobs, a restart' % d['job_gap_s'] if d.get('job_gap_s') else ''
    cost = ('%.1f s measured per mark' % d['mark_s'] if d.get('mark_basis') == 'measured'
            else '%.1f s by the drive model' % d['mark_s'])
    why = 'Each job of %s ends with a synchronous file mark whatever the file-mark setting (%s)%s: %s; at %s or ' \
          'more per job those boundaries cost under %.0f %% of the time (the forecast: %s).' % (
              _volume_mb(d['job_size_mb']), cost, gap, backhitch_words(now), _volume_mb(d['recommended_mb']),
              100 * d['loss_target'], compare_words(now, fix['forecast']))
    return ('Write fewer, larger jobs to each volume (%s or more each)' % _volume_mb(d['recommended_mb']),
            setting(d['software'], 'job_size', fix['value']), why)


def _streams(fix, d, now):
    target = fix['value']
    why = '%d stream%s give %s (%s); the forecast: %s%s.' % (
        target, _plural(target), fmt_rate(d['feed_mb_s']), basis(d['basis']),
        class_words(fix['forecast'], now['need_floor_mb_s'], now['need_full_mb_s']),
        '' if d['reaches_full'] else '; no number of streams up to %d reaches full speed' % d['max_streams'])
    return 'Run %d parallel streams into this drive' % target, setting(d['software'], 'streams', target), why


def _staging(fix, d, now):
    if d.get('multiplexing') is False:
        return _staging_one_at_a_time(fix, d, now)
    why = 'Even %d streams give %s (%s), and the forecast still has the drive shoe-shine; a disk stage that reads ' \
          'sequentially at %s or more feeds the drive instead.' % (
              d['max_streams'], fmt_rate(d['feed_mb_s']), basis(d['basis']), fmt_rate(now['need_full_mb_s']))
    return 'Stage to disk first, then copy to tape', setting(d['software'], 'staging', None), why


def _drive_path(fix, d, now):
    if d['cause'] == 'link':
        link = _link_name(d['link'])
        return ('Give the drive a faster link than %s' % link,
                'HBA, cabling (and expander) to the drive: a link carrying %s or more' % fmt_rate(d['need_full_mb_s']),
                'The %s link carries %s; %s needs %s at %.2f:1 and the sources give %s.' % (
                    link, fmt_rate(d['link_mb_s']), d['label'], fmt_rate(d['need_full_mb_s']), d['ratio'],
                    fmt_rate(d['feed_mean_mb_s'])))
    why = 'At its best block size the drive path took %s of %s data, below the %s the drive itself takes of it; ' \
          '%s.' % (fmt_rate(d['path_mb_s']), _ratio_text(d['pattern_ratio']), fmt_rate(d['drive_takes_mb_s']),
                   'no number of streams gets past it' if rounded_rate_below(d['path_mb_s'], d['need_floor_mb_s'])
                   else 'more streams can at best make the drive speed-match')
    return 'Make the host-to-drive path faster', 'HBA, cabling, st driver buffer (see tapeops.qualify.st_tuning)', why


def _memory(fix, d, now):
    m = d['memory']
    return ('Give the host at least %d MB of RAM' % m['needed_mb'], 'RAM',
            '%d MB base + %d MB x %d interleaved stream%s = %d MB; the host has %d MB.' % (
                m['base_mb'], m['per_stream_mb'], m['streams'], _plural(m['streams']), m['needed_mb'], m['total_mb']))


FIXES = {
    'block_size': _block_size, 'st_direct_io': _st_direct_io, 'immediate_filemarks': _immediate_filemarks,
    'segment_size': _segment_size, 'job_size': _job_size,
    'streams': _streams, 'staging': _staging, 'drive_path': _drive_path, 'memory': _memory,
}


def _health_fix(fix, d, now):
    """A health fix (``_verdict.HEALTH_FIX`` + a ``_health`` fix id) ranked first: the findings behind it."""
    why = '%s The write test took at most %s, below the %s the drive takes of that data: health is the likely ' \
          'cause, so this comes before any source or setting fix. %s' % (
              ' '.join(health_finding(f) for f in d['findings']), fmt_rate(d['path_mb_s']),
              fmt_rate(d['drive_takes_mb_s']), health_fix(d['fix']))
    return HEALTH_FIX_TITLES.get(d['fix'], health_fix(d['fix']).rstrip('.')), HEALTH_FIX_WHERE, why


def fix(data, now):
    """The ``_records.Fix`` the host document carries: the fix's data and its title / setting / why."""
    words = _health_fix if data['id'].startswith('health_') and data['id'] not in FIXES else FIXES[data['id']]
    title, where, why = words(data, data['data'], now)
    forecast = data.get('forecast')
    return _records.Fix(id=data['id'], rank=data.get('rank'), value=data.get('value'),
                        feed_after_mb_s=data.get('feed_after_mb_s'),
                        forecast=_records.Forecast.from_dict(forecast) if forecast is not None else None,
                        title=title, setting=where, why=why)


def fact(data):
    """One reason, in words."""
    return FACTS[data['id']](data)


# ---------------------------------------------------------------------------
# the whole verdict


def verdict(decision, drive=None):
    """The ``_records.Verdict`` of ``_verdict.evaluate``'s decision for the drive ``drive``: its data and words."""
    forecast = decision['forecast']
    now = forecast['now']
    fixes = [fix(f, now) for f in decision['fixes']]
    numbers = decision['numbers']
    out = _records.Verdict(
        drive=drive, class_=decision['class'], class_at_current_settings=decision['class_at_current_settings'],
        class_after_setting_fixes=decision['class_after_setting_fixes'],
        would_shoe_shine=decision['would_shoe_shine'],
        inconclusive_reason=inconclusive_words(decision['inconclusive_reason']), what_if=decision['what_if'],
        drive_label=decision['drive_label'],
        numbers=dict(numbers, tape_ratio_basis=basis(numbers.get('tape_ratio_basis')),
                     drive_path_basis=basis(numbers.get('drive_path_basis'))),
        forecast=_records.VerdictForecasts(now=_records.Forecast.from_dict(now),
                                           after_setting_fixes=_records.Forecast.from_dict(
                                               forecast['after_setting_fixes']),
                                           trace=forecast['trace']),
        reasons=[fact(f) for f in decision['facts']], findings=[finding(f) for f in decision['findings']],
        fixes=fixes, summary=summary(decision, fixes))
    if decision.get('contended'):
        out.contended = True
        out.summary += ' (Measured under contention: see the findings.)'
    return out


# ---------------------------------------------------------------------------
# beside the verdict in the reports


def table_rate(value):
    """'123' / '12.3' (a rate without its unit), '-' when unknown."""
    return fmt_rate(value).replace(' MB/s', '') if value is not None else '-'


def restore_words(numbers):
    """Restore (read-back) rate beside the backup rate, or None when the run did not read back."""
    if numbers.get('restore_mb_s') is None:
        return None
    verified = numbers.get('restore_verified')
    rate = table_rate
    return 'restore (read-back) %s MB/s beside backup %s MB/s writing the same blocks (forecast feed now %s MB/s); ' \
           '%s' % (rate(numbers.get('restore_mb_s')), rate(numbers.get('restore_write_mb_s')),
                   rate(numbers.get('feed_now_mb_s')),
                   'verified' if verified else 'NOT verified' if verified is False else 'verification unknown')


def interface_words(numbers):
    """The drive's HBA link against what it takes, and how many such drives the host keeps busy; or None."""
    rate = table_rate
    parts = []
    if 'link_transport' in numbers:
        name = ' '.join(str(numbers[k]) for k in ('link_transport', 'link_rate') if numbers.get(k))
        if numbers.get('link_mb_s') is not None:
            parts.append('%s link, %s MB/s usable: %s (the drive takes %s MB/s)' % (
                name, rate(numbers['link_mb_s']), 'caps the drive' if numbers.get('link_caps') else 'enough',
                rate(numbers.get('need_full_mb_s'))))
        elif numbers.get('link_transport'):
            parts.append('%s link, usable rate unknown' % name)
        else:
            parts.append('not a SAS or FC link')
    if numbers.get('drives_streaming_at_once') is not None:
        text = 'the host\'s sources keep %s streaming at once (%s from shoe-shining)' % (
            numbers['drives_streaming_at_once'], numbers.get('drives_not_shoeshining_at_once'))
        if numbers.get('memory_needed_at_once_mb') is not None:
            total = numbers.get('memory_total_mb')
            streams = numbers.get('streams_at_once')
            text += '; %s stream%s need%s %s MB by the memory rule, the host has %s' % (
                streams, '' if streams == 1 else 's', 's' if streams == 1 else '', numbers['memory_needed_at_once_mb'],
                '%d MB' % total if total is not None else 'unknown RAM')
        parts.append(text)
    return '; '.join(parts) or None


def measured_before(doc):
    """What a host without a verdict measured before it was lost (its source read), in words, or None."""
    aggregate = (doc.get('source') or {}).get('aggregate') if isinstance(doc.get('source'), dict) else None
    if not isinstance(aggregate, dict) or aggregate.get('mean_mb_s') is None:
        return None
    return 'Measured before: the sources delivered %s on average, %s sustained (%s per-second samples).' % (
        fmt_rate(aggregate.get('mean_mb_s')), fmt_rate(aggregate.get('p5_mb_s')),
        aggregate.get('samples', '?'))


# ---------------------------------------------------------------------------
# an observe run (_judge._host.observe, _judge._observed.observed_drive) and its reports

NOTHING_OBSERVED = 'No drive of this host was watched: each drive\'s error says why.'

# the observed entry's status in the reports' class column when it has no class
OBSERVED_STATUS = {'idle': 'IDLE', 'not_judged': 'NOT JUDGED', 'not_observed': 'NOT OBSERVED'}

TAPE_RATIO_SOURCES = {
    'drive': "the drive's own ratio",
    'given': 'the ratio given as tape_ratio',
    'incompressible': 'no ratio known, 1.0 assumed',
}


def not_watched(device, why):
    """An observe run's drive without a window: what its tape_drive_observe task said (failed, ended, skipped)."""
    if why == 'Timeout exceeded':      # async_wrapper's words when the job outlived its time limit
        why = ('the watch ran past its time limit (qualify_observe_seconds plus the time the drive\'s log pages may '
               'take) and Ansible ended it; nothing of the window is kept')
    return '%s was not watched: %s.' % (device, str(why).rstrip('.'))


def job_not_placed(job, named):
    """A Bacula job that ran during the window, on a drive that cannot be told from the others."""
    return ('a Bacula job (JobId %s, status %s) ran during the window, but which drive it wrote to is not known%s: '
            'name that drive in tapeops_bacula.device' % (
                job.jobid if job.jobid is not None else '?', job.status or '?',
                ' (it names %s, which was not watched)' % named if named else ''))


def observed_class(entry):
    """The class column of an observed drive: its observed class, else IDLE / NOT JUDGED / NOT OBSERVED."""
    entry = entry or {}
    return (entry.get('observed') or {}).get('class') or OBSERVED_STATUS.get(entry.get('status'), 'NOT OBSERVED')


def _duration(seconds):
    seconds = _records.finite(seconds)
    if seconds is None:
        return 'unknown'
    if seconds < 120:
        return '%.0f s' % seconds
    return '%.0f min' % (seconds / 60.0) if seconds < 7200 else '%.1f h' % (seconds / 3600.0)


def window_text(entry):
    """'87 s, ended idle' / '8.0 h, ended at its length' of an observed drive's window; '-' when unknown."""
    window = ((entry or {}).get('window') or {}).get('window') or {}
    if window.get('seconds') is None:
        return '-'
    ended = {'idle': 'ended idle', 'duration': 'ended at its length', 'drive_gone': 'ended: the drive went away'}
    said = ended.get(window.get('ended_by'))
    return '%s%s' % (_duration(window['seconds']), ', %s' % said if said else '')


def tape_ratio_text(observed, short=False):
    """'1.21:1 (drive)' (``short``, a table cell) or "1.21:1, the drive's own" of an observed data phase."""
    ratio, source = observed.get('tape_ratio'), observed.get('tape_ratio_source')
    if ratio is None:
        return '-'
    if short:
        return '%.2f:1 (%s)' % (ratio, source)
    return '%.2f:1, %s' % (ratio, TAPE_RATIO_SOURCES.get(source, source))


def backhitch_pair(entry):
    """'4 / 4': the back-hitches the drive counted / the forecast replayed ('unknown' for a drive without a counter)."""
    seen, replayed = (entry or {}).get('observed') or {}, (entry or {}).get('forecast') or {}
    if not seen:
        return '-'
    counted = seen.get('backhitches')
    return '%s / %s' % ('unknown' if counted is None else counted,
                        '-' if replayed.get('backhitches') is None else replayed['backhitches'])


def job_text(entry):
    """The Bacula job an observed drive wrote for ('-' when none ran): id, status, bytes, the daemon's rate."""
    job, error = (entry or {}).get('job') or {}, (entry or {}).get('job_error')
    if not job and not error:
        return '-'
    text = 'JobId %s %s' % (job.get('jobid') if job.get('jobid') is not None else '?', job.get('status') or '?')
    if job.get('bytes') is not None:
        text += ', %s' % _data_size(job['bytes'])
    if job.get('data_mb_s') is not None:
        text += ', storage daemon %s' % fmt_rate(job['data_mb_s'])
    if error:
        text += ' (failed: %s)' % str(error).rstrip('.')
    return text


def observed_summary(entry):
    """One sentence of an observed drive: its class with the numbers, or why it was not judged."""
    entry = entry or {}
    status = entry.get('status')
    if status == 'idle':
        window = window_text(entry)
        return 'IDLE: the drive wrote nothing in its window%s: not judged.' % (
            '' if window == '-' else ' (%s)' % window)
    if status != 'judged':
        why = entry.get('error') or '; '.join(entry.get('notes') or []) or 'no window'
        return '%s: %s' % (observed_class(entry), str(why).rstrip('.') + '.')
    seen, replayed = entry.get('observed') or {}, entry.get('forecast') or {}
    if seen.get('class') == INCONCLUSIVE:
        return 'INCONCLUSIVE: %s.' % str(seen.get('inconclusive_reason') or 'too little data').rstrip('.')
    return ('%s observed: %s in %s of data (floor %s, full speed %s at %s); %s, %s replayed by the forecast from '
            'the same feed, which says %s at %s.' % (
                seen['class'], fmt_rate(seen.get('mb_s')), _duration(seen.get('data_seconds')),
                fmt_rate(seen.get('need_floor_mb_s')), fmt_rate(seen.get('need_full_mb_s')),
                tape_ratio_text(seen), _counted(seen), replayed.get('backhitches') or 'none', replayed.get('class'),
                fmt_rate(replayed.get('effective_mb_s'))))


def _counted(seen):
    """The back-hitches an observed drive counted itself, in words."""
    counted = seen.get('backhitches')
    if counted is None:
        return 'back-hitches not counted (no counter of this drive is read: the class is the rate\'s alone)'
    if not counted:
        return 'no back-hitch counted by the drive'
    low = seen.get('backhitches_per_hour_low')
    bound = '' if low is None else ', at least %.0f at %.0f %% confidence' % (low, 100.0 * _records.BACKHITCH_CONFIDENCE)
    return '%d back-hitch%s counted by the drive (%.0f an hour%s)' % (
        counted, '' if counted == 1 else 'es', seen.get('backhitches_per_hour') or 0.0, bound)


def observed_message(observed, error):
    """qualify_verdict's message in an observe run: each watched drive's sentence, else why there is none."""
    return '; '.join('%s: %s' % (o['drive'], observed_summary(o)) for o in observed) or (error or 'nothing watched')


# forecast against observed (_compare.against_observed decides, as data)

def against_observed_reason(reason):
    """One reason of a forecast-against-observed pair in words."""
    kind = reason['id']
    if kind == 'no_forecast':
        return 'no verdict for this drive in the qualify run'
    if kind == 'not_observed':
        return 'not watched in this run' if reason.get('status') is None else 'observed %s: nothing to compare' % (
            OBSERVED_STATUS.get(reason['status'], reason['status']).lower())
    if kind == 'host_not_in_run':
        return 'host not part of this run'
    if kind == 'inconclusive':
        return 'INCONCLUSIVE %s: too little data to compare' % reason['side']
    if kind == 'class':
        return 'forecast %s, observed %s' % (reason['forecast'], reason['observed'])
    return 'forecast %s, observed %s (%+.1f %%)' % (
        fmt_rate(reason['forecast']), fmt_rate(reason['observed']), reason['pct'])


def backhitches_predicted(predicted, counted):
    """'5.1 back-hitches predicted for the observed hours of data, 4 counted by the drive'."""
    return '%.1f back-hitches predicted for the observed hours of data, %s' % (
        predicted, 'the drive counts none it reports' if counted is None else '%s counted by the drive' % counted)


def against_observed_line(compared):
    """The fleet message's sentence of a forecast-against-observed comparison (``_compare.against_observed``)."""
    return 'Forecast against observed (%s): %d drive(s) compared, %d with the class forecast' % (
        compared['earlier'].get('id') or compared['earlier'].get('dir') or 'the qualify run',
        compared['compared'], compared['class_matches'])


# ---------------------------------------------------------------------------
# a run's fixes for the roles that apply them (_judge._fixes)

WHAT_IF_NOT_APPLIED = 'a what-if verdict: the drive is not installed yet'


def not_a_positive_whole_number(value):
    return 'expected a positive whole number, got %r' % (value,)


def no_option_in(name, value):
    return 'expected a value with %s, got %r' % (name, value)


def not_whole_kb(value):
    return '%d bytes is not a whole number of KB, as Data Protector\'s block size is' % value


def not_whole_kib_for_netbackup(value):
    return '%d bytes is not a multiple of 1024, which NetBackup would round down' % value


def not_true(value):
    return 'expected true, got %r' % (value,)


def fix_not_offered(fix_id, software, why):
    """A fix a backup software cannot take (``_fixes.NOT_OFFERED``'s why): not planned for its hosts."""
    return 'the %s fix is not for a %s host: %s.' % (fix_id, software, why)


def fix_not_taken(variable, why):
    """A role variable that cannot take a fix's value (``why``: the conversion's complaint)."""
    return '%s cannot take it (%s)' % (variable, why)


def fix_values_differ(variable, values):
    """A host-wide variable the host's drives ask different values of (``values``: their JSON, sorted)."""
    return ('the drives of this host ask for different values of %s (%s), which sets one for all: set it per device '
            'by hand' % (variable, ', '.join(values)))


def manual_fix(drive, fix):
    """A fix left to do by hand, in the verdict's own words (``fix``: the plan's entry: title, setting, why, note)."""
    text = '%s: %s.' % (drive, str(fix.get('title') or fix.get('id')).rstrip('.'))
    if fix.get('setting'):
        text += ' Where: %s.' % str(fix['setting']).rstrip('.')
    if fix.get('why'):
        text += ' Why: %s.' % str(fix['why']).rstrip('.')
    if fix.get('note'):
        text += ' Not applied: %s.' % fix['note']
    return text


def applied_fix(drive, title, role, variable, value_json, effect, what):
    """'/dev/nst0: Use 256 KiB tape blocks -> st_tuning st_tuning_block_size = 262144 (checks ...)'."""
    return '%s: %s -> %s %s = %s (%s %s)' % (drive, str(title).rstrip('.'), role, variable, value_json, effect, what)


def document_refused(host, why):
    return 'The host document of %s has %s' % (host, why)


def no_run_dir(run_dir):
    return ('The run directory %s does not exist: give a directory the qualify playbook wrote, e.g. '
            '-e qualify_run_dir=reports/20261123T195725Z (it holds hosts/<host>.json).' % run_dir)


def no_document(run_dir, host, path):
    return ('%s has no document for %s (%s): the host was not in that run or did not get that far; qualify it first '
            '(-l %s).' % (run_dir, host, path, host))


def no_verdict_to_apply(host, status, error):
    return ('The run has no verdict for %s (status %s: %s): nothing to apply; fix that and re-run qualify (-l %s).'
            % (host, status, error or 'no reason recorded', host))


def no_drive_verdict(host):
    return 'The run has no verdict for %s (its document lists no drive with one): nothing to apply.' % host


def software_changed(host, recorded, software):
    return ('The run judged %s as a %s host but the inventory now says %s: its fixes are worded for %s; re-run '
            'qualify with the inventory as it is now.' % (host, recorded, software, recorded))


def fixes_message(host, plan):
    """qualify_fixes_info's message of ``_fixes.plan``'s result for ``host``."""
    if plan['skipped']:
        return 'Skipped: %s' % plan['reason']
    return '%s: %s; %d fix(es) left to do by hand.' % (
        host, '; '.join(plan['applied']) if plan['applied'] else 'no fix a role applies', len(plan['manual']))


# ---------------------------------------------------------------------------
# the actions' messages (qualify_verdict, qualify_report)

FAILED_BEFORE_VERDICT = 'The host failed before its verdict.'
FAILED_BEFORE_WATCH = 'The host failed before its drives were watched.'
OBSERVE_NOT_QUALIFY = ('An observe run judges the windows it watched and gives no verdict: pass observed (and jobs) '
                       'without source, write_sweep, target_generation or tape_ratio_from, or leave observed unset '
                       'and the run\'s mode other than observe for a verdict.')


def not_a_record(why):
    """A task argument that is not a module's registered result (``_records.RecordError``'s message)."""
    return '%s Pass the registered result of the module as it is.' % why


def would_write(path):
    return 'Check mode: would write %s.' % path


def verdict_message(verdicts, error):
    """qualify_verdict's message: each drive's summary, else why the host has none."""
    return '; '.join('%s: %s' % (v['id'], v['summary']) for v in verdicts) or (error or 'no verdict')


def reports_check_mode(report_dir, exists):
    """qualify_report in check mode: what a real run writes (``exists``: the run directory is there)."""
    if not exists:
        return ('Check mode: no run directory %s (a check run writes none); a real run writes summary.md, report.html '
                'and junit.xml there.' % report_dir)
    return 'Check mode: would write summary.md, report.html and junit.xml in %s.' % report_dir


def fleet_message(report_dir, fleet, comparison, compare_to, regressions):
    """qualify_report's message: each drive's class, and what changed since the earlier run."""
    lines = ['%s %s: %s' % (f['host'], f['drive'] or '-', f['class'] or (f['status'] or '').upper()) for f in fleet]
    msg = 'Reports in %s. %s' % (report_dir, '; '.join(lines))
    if comparison is not None:
        msg += '. Since %s: %d regression(s), %d improvement(s)%s' % (
            comparison['earlier'].get('id') or compare_to, comparison['regressions'], comparison['improvements'],
            ''.join('; REGRESSED %s %s: %s' % (r['host'], r['drive'], ', '.join(r['reasons'])) for r in regressions))
    return msg


def not_compared(msg, error, hint):
    """The message with why the comparison could not be made, and how to make it."""
    return '%s. NOT COMPARED: %s %s' % (msg, error, hint)


def no_comparison_fails(report_dir, error, hint):
    """The task fails: no comparison, and qualify_fail_on_regression is set."""
    return ('No comparison, and qualify_fail_on_regression is set (reports written to %s, without it): %s %s'
            % (report_dir, error, hint))


def regressed(regressions, compare_to, report_dir):
    """The task fails: drives regressed since the earlier run."""
    return '%d drive(s) regressed since %s (reports written to %s): %s' % (
        len(regressions), compare_to, report_dir, '; '.join(
            '%s %s: %s' % (r['host'], r['drive'], ', '.join(r['reasons'])) for r in regressions))


def failing_drives(failing, classes, report_dir):
    """The task fails: drives are in a failing class (``classes``)."""
    return '%d drive(s) are %s (reports written to %s): %s' % (
        len(failing), ' or '.join(classes), report_dir,
        '; '.join('%s %s: %s' % (f['host'], f['drive'], f['summary']) for f in failing))


def rebuild_hint(playbook, report_dir, earlier, runs):
    """How to rebuild a run's reports against the right earlier run (the role's report-only mode)."""
    return ('To compare, rebuild the reports with the right directory: ansible-playbook tapeops.qualify.%s '
            '-e qualify_report_only=true -e qualify_run_dir=%s -e qualify_compare_to=<earlier run>%s.' % (
                playbook, report_dir, ' (runs in %s: %s)' % (earlier, ', '.join(runs)) if runs else ''))


# ---------------------------------------------------------------------------
# a drive's and its cartridge's health (_judge/_health, docs/health.md): each drive's entry's health in the host
# document, its fixes first in a verdict where health is the likely cause of a slow sweep

HEALTH_FIXES = {
    'clean_drive': 'Clean the drive with a cleaning cartridge: the drive asks for it.',
    'replace_cleaning_cartridge': ('Replace the cleaning cartridge (the last one was expired or not valid for '
                                   'this drive), then clean the drive.'),
    'retire_cartridge': 'Copy the data on this cartridge to another one and retire it.',
    'isolate_fault': ('Find out whether the cartridge or the drive is at fault: load a known good cartridge in this '
                      'drive and this cartridge in a known good drive; retire the cartridge if it fails in both '
                      'drives, call service if this drive fails with good cartridges.'),
    'call_service': 'Call the drive\'s service (its vendor\'s support): the drive reports a fault of its hardware.',
    'check_environment': ('Check the power, temperature and humidity around the drive against its specification, '
                          'then call service if the flag stays.'),
    'check_interface': ('Check the drive\'s cables and connections (host or library side), then call service if '
                        'it persists.'),
    'reread_cartridge': 'Read the cartridge through once: the drive rebuilds its tape directory as it reads.',
    'retension_cartridge': 'Retension the cartridge (wind it end to end: mt retension) and run the job again.',
}

# a health fix's title where it ranks among the verdict's fixes, and where it is done
HEALTH_FIX_TITLES = {
    'clean_drive': 'Clean the drive',
    'replace_cleaning_cartridge': 'Replace the cleaning cartridge and clean the drive',
    'retire_cartridge': 'Retire the cartridge',
    'isolate_fault': 'Find out whether the cartridge or the drive is at fault',
    'call_service': 'Call service for the drive',
    'check_environment': 'Check the drive\'s power, temperature and humidity',
    'check_interface': 'Check the drive\'s cables and connections',
    'reread_cartridge': 'Read the cartridge through once',
    'retension_cartridge': 'Retension the cartridge',
}
HEALTH_FIX_WHERE = 'the drive and its cartridge, not a setting'

HEALTH_UNKNOWN = {
    'not_read': 'not read',
    'not_readable': 'what discovery returned could not be read as a cartridge memory',
    'no_flags': 'the page held no flag',
    'no_counters': 'the page held none of its counters',
    'no_rewrites': 'the page held no rewrite or reread counter',
    'no_bytes': 'no page said how much data the drive moved',
    'too_little_data': 'too little data moved to judge a rate on',
    'generation_unknown': 'the cartridge\'s LTO generation is unknown, so is its load life',
}

_HEALTH_WHAT = {
    'tape_alert': 'TapeAlert flags (page 0x2E)',
    'write_errors': 'write error counters (page 0x02)',
    'read_errors': 'read error counters (page 0x03)',
    'write_error_rate': 'rewrites per GB written',
    'read_error_rate': 'rereads per GB read',
    'write_retry_rate': 'write retries per data set over the cartridge\'s life',
    'read_retry_rate': 'read retries per data set over the cartridge\'s life',
    'cartridge_statistics': 'the cartridge\'s lifetime counters (page 0x17 or 0x30)',
    'cartridge_loads': 'the cartridge\'s loads against its load life',
    'log_pages': 'the drive\'s log pages',
    'cartridge_memory': 'the cartridge\'s memory (MAM)',
}


def health_finding(finding):
    """One health finding (``_records.HealthFinding`` or its dict) in a sentence, with its evidence."""
    f = finding.to_dict() if isinstance(finding, _records.HealthFinding) else dict(finding or {})
    e = f.get('evidence') or {}
    code = f.get('code')
    estimate = ' (an estimate of this collection)' if f.get('estimate') else ''
    if code == 'tape_alert':
        return 'The drive raised TapeAlert flag %s "%s" (page 0x2E, %s).' % (
            e.get('flag'), e.get('name'), {'C': 'critical', 'W': 'warning', 'I': 'information'}.get(
                e.get('type'), 'no type known'))
    if code == 'cartridge_tape_alert':
        return ('The cartridge\'s memory says TapeAlert flag %s "%s" was raised on its previous load.'
                % (e.get('flag'), e.get('name')))
    if code == 'cleaning_requested':
        return 'The drive asks to be cleaned (page %s).' % ' and '.join(e.get('pages') or ['?'])
    if code == 'uncorrected_errors':
        return '%s uncorrected %s error(s) on the loaded cartridge since its load (page %s).' % (
            e.get('value'), 'write' if e.get('page') == '0x02' else 'read', e.get('page'))
    if code == 'error_rate':
        return '%s %s per GB since the load (%s in %s GB), above the limit of %s%s.' % (
            e.get('per_gb'), 'rewrites' if e.get('page') == '0x02' else 'rereads', e.get('value'), e.get('gb'),
            e.get('limit'), estimate)
    if code == 'cartridge_errors':
        return 'The cartridge counts %s %s over its life (page %s).' % (
            e.get('value'), e.get('counter', '').replace('_', ' '), e.get('page'))
    if code == 'retry_rate':
        return '%s %s in %s data sets over the cartridge\'s life (%s per data set), above the limit of %s%s.' % (
            e.get('value'), e.get('counter', '').replace('_', ' '), e.get('data_sets'), e.get('rate'),
            e.get('limit'), estimate)
    if code == 'cartridge_loads':
        return ('The cartridge has been loaded %s times, near or past its load life of %s (LTO-%s)%s.'
                % (e.get('value'), e.get('limit'), e.get('generation') or '?', estimate))
    if code == 'cartridge_passes':
        return ('%s passes of the tape over the head (%s, page %s), near or past the %s passes over any area of '
                'the tape the drive makers recommend as the most%s.' % (
                    e.get('value'), e.get('counter', '').replace('_', ' '), e.get('page'), e.get('limit'),
                    estimate))
    return 'Health finding %s: %r.' % (code, e)


def health_cell(health):
    """A drive's health in a table cell: its status, and the first finding's fix where there is one."""
    h = health.to_dict() if isinstance(health, _records.Health) else dict(health or {})
    status = h.get('status') or _records.HEALTH_UNKNOWN
    if status == _records.HEALTH_UNKNOWN:
        return 'not read'
    findings = [f for f in h.get('findings') or [] if isinstance(f, dict) and f.get('fix')]
    if not findings:
        return status
    return '%s: %s' % (status, HEALTH_FIX_TITLES.get(findings[0]['fix'], findings[0]['fix']).lower())


def health_totals(totals):
    """The fleet's health in a line (``_reporting._report.health_totals``' counts): '3 drives need cleaning, 1
    cartridge near end of life; 4 OK, 2 not read'."""
    t = dict(totals or {})
    parts = []
    if t.get('clean'):
        parts.append('%d drive%s need%s cleaning' % (t['clean'], _plural(t['clean']), '' if t['clean'] > 1 else 's'))
    if t.get('end_of_life'):
        parts.append('%d cartridge%s near end of life' % (t['end_of_life'], _plural(t['end_of_life'])))
    if t.get('failing'):
        parts.append('%d drive%s failing (call service)' % (t['failing'], _plural(t['failing'])))
    if t.get('degraded'):
        parts.append('%d drive%s degraded' % (t['degraded'], _plural(t['degraded'])))
    rest = ['%d OK' % t['ok']] if t.get('ok') else []
    if t.get('unknown'):
        rest.append('%d not read' % t['unknown'])
    return '; '.join(x for x in (', '.join(parts), ', '.join(rest)) if x) or 'no drive\'s health read'


def health_fix(fix):
    """What to do for a health finding's ``fix`` id."""
    return HEALTH_FIXES.get(fix, 'No fix is known for %s.' % fix)


def health_unknown(what, reason):
    """Why one part of a drive's health could not be judged."""
    subject = _HEALTH_WHAT.get(what, what.replace('_', ' '))
    return '%s%s: %s.' % (subject[:1].upper(), subject[1:], HEALTH_UNKNOWN.get(reason, reason))


def health_summary(health):
    """A drive's health in one line: the status and its worst finding, or why it is unknown."""
    h = health.to_dict() if isinstance(health, _records.Health) else dict(health or {})
    findings = h.get('findings') or []
    status = h.get('status') or _records.HEALTH_UNKNOWN
    if findings:
        more = len(findings) - 1
        return '%s: %s%s' % (status, health_finding(findings[0]),
                             ' (and %d more finding%s)' % (more, 's' if more > 1 else '') if more else '')
    if status == _records.HEALTH_OK:
        return 'OK: no TapeAlert flag, counter or cartridge figure read crosses a limit.'
    return '%s: the drive\'s TapeAlert flags were not read, and nothing else read crosses a limit.' % status


# ---------------------------------------------------------------------------
# Amanda, and a backup application this collection does not know (docs/amanda.md, docs/verdict.md)

SOFTWARE_NAMES['amanda'] = 'Amanda'
# the applications the verdict knows, in the words of an input or a fact that names them
KNOWN_SOFTWARE = ('data_protector', 'bacula', 'bareos', 'netbackup', 'amanda')


def amanda_mbytes(mb):
    """Decimal MB (the verdict's) as Amanda's mbytes (2^20 bytes), rounded up: 'this much or more' stays true."""
    return int(-(-int(round(float(mb) * 1e6)) // 1048576))


def _amanda_block(value):
    if value % 1024:
        return ('Amanda device (amanda.conf on the Amanda server): device-property "BLOCK_SIZE" "%d" (not a whole '
                'number of kbytes, which the tapetype\'s blocksize takes)' % value)
    return ('Amanda tapetype (amanda.conf on the Amanda server): blocksize %d kbytes '
            '(tapeops.qualify.qualify_amanda_tapetype writes the whole tapetype)' % (value // 1024))


def _amanda_part_size(value):
    return ('Amanda tapetype: part-size %d mbytes or more, or 0 (no splitting, its default): a file mark ends every '
            'dump or part, so a dump smaller than %d MB costs a mark of its own' % (amanda_mbytes(value), value))


# The segment size fix's title in each application's own words: what it calls the data between two marks
SEGMENT_TITLES = {
    'data_protector': 'Write larger segments',
    'bacula': 'Set a larger Maximum File Size',
    'bareos': 'Set a larger Maximum File Size',
    'netbackup': 'Set a larger Maximum Fragment Size',
    'amanda': 'Set a larger part-size',
}


# Where to change a setting in the words of an application whose settings have names of their own:
# (software, fix id) -> the words of setting() for that value
APPLICATION_SETTINGS = {
    ('amanda', 'block_size'): _amanda_block,
    ('amanda', 'segment_size'): _amanda_part_size,
    ('amanda', 'staging'): lambda value: (
        'Amanda: a holding disk (a holdingdisk section; the dumptype\'s holdingdisk auto, its default, or required) '
        'that the taper writes to tape from, with flush-threshold-dumped so that a volume is started only when '
        'enough is there'),
}


def _staging_one_at_a_time(fix, d, now):
    """The staging fix of an application that writes one backup at a time to a drive (Amanda)."""
    why = ('%s writes one backup at a time to a drive (no multiplexing), so more streams are no fix: the sources give '
           'this drive %s, below the %s its full speed needs; a stage that the drive is written from, reading '
           'sequentially at %s or more, feeds it instead.' % (
               SOFTWARE_NAMES.get(d['software']), fmt_rate(d['feed_mb_s']), fmt_rate(d['need_full_mb_s']),
               fmt_rate(d['need_full_mb_s'])))
    return 'Write to tape from a holding disk', setting(d['software'], 'staging', None), why


def software_unknown_words(software):
    """'Backup application not known (tapeops_backup.software unset)' / '... "veeam" is not one ...'."""
    if not software:
        return 'Backup application not known (tapeops_backup.software unset)'
    return 'Backup application "%s" is not one this collection knows (%s)' % (software, ', '.join(KNOWN_SOFTWARE))


def _application_unknown(f):
    """The ``application_unknown`` fact: which application was assumed, and what is therefore not offered."""
    text = ('%s: only the st driver\'s, the host\'s and the sources\' fixes are offered (the block size as the st '
            'driver carries it); the application\'s own file marks and segment size are neither offered nor counted '
            'in the forecast with the fixes' % software_unknown_words(f.get('software')))
    if not f.get('software'):
        text += ' (set tapeops_backup.software where the host runs one of %s or %s)' % (
            ', '.join(KNOWN_SOFTWARE[:-1]), KNOWN_SOFTWARE[-1])
    return text + '.'


def _block_default(f):
    return ('No block size was given (tapeops_backup.block_size_bytes), so the verdict judges %s\'s default, %s (%s); '
            'set block_size_bytes to the block size the tapetype sets where it differs.' % (
                SOFTWARE_NAMES.get(f['software']), fmt_bytes(f['block_size']), f['basis']))


def _segment_per_backup(f):
    return ('%s ends every dump, or every part of one (the tapetype\'s part-size; 0, its default, splits nothing), with '
            'a synchronous file mark, and neither a dump size (tapeops_backup.job_size_mb) nor a part size '
            '(segment_size_mb) was given: the forecast models no file marks; set job_size_mb to the size of a typical '
            'dump (job_gap_s to the seconds between two), and segment_size_mb to part-size where the tapetype splits '
            'dumps.' % SOFTWARE_NAMES.get(f['software']))


FACTS.update({
    'application_unknown': _application_unknown,
    'block_default': _block_default,
    'segment_per_backup': _segment_per_backup,
})


def application_fix_not_offered(fix_id, software):
    """A fix that is the backup application's own setting, in a run of a host whose application is not known."""
    return ('the %s fix is a setting of the backup application: %s, so it is not planned; set tapeops_backup.software '
            'and re-run qualify' % (fix_id, software_unknown_words(software)[0].lower() + software_unknown_words(
                software)[1:]))


# ---------------------------------------------------------------------------
# an Amanda tapetype from a run (_judge._amanda, the qualify_amanda_tapetype action)

TAPETYPE_BLOCK_BASIS = {
    'fix': 'the block size the verdict recommends (its block size fix)',
    'judged': 'the block size the verdict judged',
    'sweep_best': 'the write sweep\'s best, the run knowing no block size in use',
    'amanda_default': 'not known to the run: no blocksize line, so Amanda\'s default, 32 kbytes, applies',
}


def tapetype_comment(t):
    """The tapetype's ``comment``: the run, the host and drive, what is measured and what modelled."""
    return 'tapeops.qualify run %s, %s %s%s: %s, speed %s; hardware compression %s' % (
        t['run'] or '?', t['host'], t['drive'], ' (%s)' % t['product'] if t['product'] else '',
        'length from the cartridge memory, filemark modelled' if t['length_basis'] == 'mam' else
        'length and filemark modelled',
        'measured' if t['speed_basis'] == 'measured' or t['speed_how'] == 'measured' else
        'modelled' if t['speed_basis'] == 'verdict' else 'not measured',
        'assumed' if t['hardware_compression'] else 'not assumed')


def _tapetype_length(t):
    if t['length_basis'] == 'mam':
        text = 'length: the %s, %.1f GB' % (t['cartridge'], t['capacity_gb'])
    else:
        text = 'length: the %s, %d GB native' % (t['cartridge'], t['capacity_gb'])
    if t['hardware_compression']:
        return text + (' x %.2f, the tape compression estimated for the sources (%s): hardware compression assumed, '
                       'for dumps Amanda does not compress itself (compress none)' % (
                           t['tape_ratio'], t['tape_ratio_basis'] or 'no basis recorded'))
    return text + ('; no hardware compression assumed: Amanda compresses in software (the dumptype\'s compress, '
                   'client fast by default), so the drive gets data it cannot compress again, as amtapetype '
                   'measures with random data')


def _tapetype_speed(t):
    block = fmt_bytes(t['block_size']) if t['block_size'] else 'the block size'
    if t['speed_basis'] == 'measured':
        return ('speed: the write sweep took %s of incompressible data at %s blocks, as amtapetype measures it '
                '(Amanda does not use speed: amanda.conf(5))' % (fmt_rate(t['speed_mb_s']), block))
    if t['speed_basis'] == 'verdict':
        return ('speed: the drive path at %s blocks as the verdict judged it, %s, %s (Amanda does not use speed: '
                'amanda.conf(5))' % (block, fmt_rate(t['speed_mb_s']), t['speed_how'] or 'no basis recorded'))
    return 'speed: not measured at %s blocks, so left out (Amanda does not use it: amanda.conf(5))' % block


def _tapetype_block(t):
    text = 'blocksize: %s%s' % ('%s, ' % fmt_bytes(t['block_size']) if t['block_size'] else '',
                                TAPETYPE_BLOCK_BASIS[t['block_basis']])
    if t['block_basis'] == 'judged' and t['best_block_size'] and t['best_block_size'] != t['block_size']:
        text += ('; the write sweep measured %s best (%s), which the verdict found no gain in for this host\'s '
                 'backups' % (fmt_bytes(t['best_block_size']), fmt_rate(t['best_mb_s'])))
    return text


def _tapetype_filemark(t, blocks):
    text = ('filemark: the tape space a file mark uses (amanda.conf(5)), which the run does not measure: modelled as '
            '%d blocks of %s, above what amtapetype measured on LTO drives (0 to 3.1 blocks: docs/amanda.md)' % (
                blocks, fmt_bytes(t['block_size'] or 32768)))
    if t['mark_seconds'] is not None:
        how = 'measured by the write test' if t['mark_basis'] == 'measured' else 'the drive model\'s'
        text += ('; a synchronous file mark costs this drive %.2f s (%s): time, not tape space, and Amanda writes '
                 'one after every dump or part' % (t['mark_seconds'], how))
    return text


def tapetype_notes(t, blocks):
    """The ``#`` lines after the tapetype: where each number comes from, and how to check it with amtapetype."""
    return [_tapetype_length(t),
            _tapetype_block(t),
            _tapetype_speed(t), _tapetype_filemark(t, blocks),
            'to measure instead (hours: it fills the cartridge twice, and overwrites it): amtapetype -f%s -t %s %s' % (
                ' -b %d' % t['block_size'] if t['block_size'] else '', t['name'], t['device'])]


def tapetype_no_verdict(host, drive, drives):
    return ('%s has no verdict for %s in this run, so no tapetype: give one of its drives with a verdict (%s)' % (
        host, drive, ', '.join(drives) or 'none: re-run qualify for it'))


def tapetype_no_capacity(drive):
    return ('%s: the run knows no cartridge capacity for it (no LTO density code of a loaded cartridge, no drive '
            'model): load a cartridge, or set generation for it in tapeops_drives, and re-run qualify' % drive)


def tapetype_name_needs_drive(host, name, drives):
    return ('name %s is for one tapetype, and %s has %d drives with a verdict (%s): give drive as well, or leave '
            'name out for a name per drive' % (name, host, len(drives), ', '.join(drives)))


def tapetype_message(host, result):
    """qualify_amanda_tapetype's message: each tapetype's name and drive, and the drives without one."""
    if result.get('skipped') is True:
        return 'Skipped: %s' % result['reason']
    made = ['%s (%s)' % (t['name'], t['drive']) for t in result['tapetypes']]
    text = '%s: %s' % (host, 'tapetype %s' % ', '.join(made) if made else 'no tapetype')
    for skip in result.get('skipped_drives') or []:
        text += '; %s' % skip['reason']
    return text + '.'
