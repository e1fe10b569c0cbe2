--------------------------------------------------------------------------
-- kbench_chart(spec): one chart from a jsonb description
--------------------------------------------------------------------------
-- spec:
--   title, subtitle, empty (the sentence shown when nothing is drawn),
--   width (800), height (440: the plot part; the legend adds rows below),
--   x, y: {label, log (true/false; absent: log when the values span a decade
--          or more), kind ('number', 'time': epoch seconds, 'index'),
--          ticks ([{v, label}]: explicit ticks), zero (y: start at 0 when linear),
--          unit (y: 'ns', 'µs', 'ms' or 's': the values are durations in it,
--          the ticks read 1.36 ms)}
--   series: [{name, group (the legend heading it goes under), panel (more
--            than one value: a panel per value), style ('imported', 'ours',
--            'roof'), line (true), step (false), label_end (text written at
--            the last point), points: [{x, y, lo, hi, title}]}]
--   marks: [{x, y, kind ('regression', 'change point', 'alert', 'note'), label, title, panel}]
--   panel_subtitles: {panel: subtitle}
CREATE OR REPLACE FUNCTION kbench_chart(spec jsonb) RETURNS text
	LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	-- eight colours (Okabe and Ito's, with a brown for their yellow, too pale on white)
	pal text[] := ARRAY['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#8C564B'];
	dashes text[] := ARRAY['', '7 3', '2 3', '9 3 2 3'];
	sty jsonb;
	cyc int;
	yunit text := CASE WHEN spec #>> '{y,unit}' IN ('ns', 'µs', 'us', 'ms', 's') THEN spec #>> '{y,unit}' END;
	labs jsonb := '[]';
	placed jsonb;
	lw float8;
	bx0 float8;
	anchor text;
	kk int;
	dropped int := 0;
	lg text;
	prev_group text;
	pnl record;
	sub text;
	total int;
	mark_colour jsonb := '{"regression": "#D55E00", "change point": "#CC79A7", "alert": "#000000", "note": "#666666"}';
	cid text := 'kc' || substr(md5(spec::text), 1, 10);
	w int;
	ph0 int;
	ml int := 84;
	mr int := 28;
	mt int := CASE WHEN spec ? 'subtitle' THEN 62 ELSE 44 END;
	mb int := 58;
	pw float8;
	ph float8;
	xk text := coalesce(spec #>> '{x,kind}', 'number');
	xlog boolean;
	ylog boolean;
	xmin float8; xmax float8; ymin float8; ymax float8;
	x0 float8; x1 float8; y0 float8; y1 float8;
	step float8;
	npts int;
	h int;
	o text := '';
	s record;
	p record;
	t record;
	i int;
	col text;
	shape int;
	sw text;
	fill text;
	pts text;
	band text;
	lbl text;
	px float8; py float8;
	lx float8; ly float8;
	legend jsonb := '[]';
	ncol int;
	gcols jsonb;
	pj jsonb;
	xticks jsonb;
	yticks jsonb;
BEGIN
	IF spec IS NULL OR jsonb_typeof(spec) <> 'object' THEN
		RAISE EXCEPTION 'a chart spec must be a json object' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'See docs/REPORTS.md for the keys (title, x, y, series, marks).';
	END IF;
	IF spec ? 'series' AND jsonb_typeof(spec->'series') <> 'array' OR spec ? 'marks' AND jsonb_typeof(spec->'marks') <> 'array' THEN
		RAISE EXCEPTION 'a chart spec''s series and marks must be json arrays' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF spec ? 'width' AND jsonb_typeof(spec->'width') <> 'number' OR spec ? 'height' AND jsonb_typeof(spec->'height') <> 'number'
	   OR NOT coalesce((spec->>'width')::numeric BETWEEN 200 AND 4000, true)
	   OR NOT coalesce((spec->>'height')::numeric BETWEEN 120 AND 4000, true) THEN
		RAISE EXCEPTION 'chart size % x % is out of range', coalesce(spec->>'width', '800'), coalesce(spec->>'height', '440')
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'The width must be a number of pixels between 200 and 4000 and the plot height one between 120 and 4000.';
	END IF;
	w := coalesce(round((spec->>'width')::numeric)::int, 800);
	ph0 := coalesce(round((spec->>'height')::numeric)::int, 440);
	-- Panels (issue 29: CPU and GPU runs are decades apart): series with
	-- more than one "panel" value are drawn as one chart per value, stacked
	-- in the order the values first appear, each with the marks of its
	-- panel (and those without one); each panel's title ends with its name,
	-- its subtitle is panel_subtitles' entry for it, else the subtitle.
	IF (SELECT count(DISTINCT coalesce(sr->>'panel', '')) FROM jsonb_array_elements(coalesce(spec->'series', '[]')) sr) > 1 THEN
		total := 0;
		FOR pnl IN SELECT coalesce(sr->>'panel', '') AS panel FROM jsonb_array_elements(spec->'series') WITH ORDINALITY q(sr, n)
		           GROUP BY 1 ORDER BY min(n) LOOP
			sub := kbench_chart((spec - 'series' - 'marks') || jsonb_build_object(
			         'title', concat_ws(' — ', spec->>'title', nullif(pnl.panel, '')),
			         'subtitle', coalesce(spec #>> ARRAY['panel_subtitles', pnl.panel], spec->>'subtitle'),
			         'series', (SELECT jsonb_agg(sr ORDER BY n) FROM jsonb_array_elements(spec->'series') WITH ORDINALITY q(sr, n)
			                     WHERE coalesce(sr->>'panel', '') = pnl.panel),
			         'marks', coalesce((SELECT jsonb_agg(m ORDER BY n) FROM jsonb_array_elements(coalesce(spec->'marks', '[]')) WITH ORDINALITY q(m, n)
			                             WHERE coalesce(m->>'panel', pnl.panel) = pnl.panel), '[]')));
			o := o || format(E'<g class="panel" transform="translate(0 %s)">\n', total)
			       || regexp_replace(regexp_replace(sub, '^<svg[^>]*>\n?', ''), '\n?</svg>$', '') || E'\n</g>\n';
			total := total + substring(sub FROM '^<svg[^>]* height="([0-9]+)"')::int;
		END LOOP;
		RETURN format('<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="12" role="img" aria-labelledby="%s-t">',
		              w, total, w, total, cid)
		    || E'\n' || format('<title id="%s-t">%s</title>', cid, kbench_svg_escape(concat_ws(' — ', spec->>'title', spec->>'subtitle')))
		    || E'\n' || o || '</svg>';
	END IF;
	IF xk NOT IN ('number', 'time', 'index') THEN
		RAISE EXCEPTION 'unknown x axis kind "%"', xk USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Use number, time or index.';
	END IF;
	pw := w - ml - mr;
	ph := ph0 - mt - mb;

	-- Every point (and mark) that can be drawn, as numbers.
	SELECT coalesce(jsonb_agg(jsonb_build_object('si', sn, 'pi', pn, 'x', (pt->>'x')::float8, 'y', (pt->>'y')::float8,
	                                          'lo', (pt->>'lo')::float8, 'hi', (pt->>'hi')::float8, 'title', pt->>'title')
	                       ORDER BY sn, pn), '[]') INTO pj
	  FROM jsonb_array_elements(coalesce(spec->'series', '[]')) WITH ORDINALITY se(sr, sn),
	       jsonb_array_elements(CASE WHEN jsonb_typeof(sr->'points') = 'array' THEN sr->'points' ELSE '[]' END) WITH ORDINALITY pe(pt, pn)
	 WHERE jsonb_typeof(pt->'x') = 'number' AND jsonb_typeof(pt->'y') = 'number';

	-- Log axes when asked, or by default when the values span a decade.
	SELECT min(x), max(x), min(least(y, lo, hi)), max(greatest(y, lo, hi)), count(*) INTO xmin, xmax, ymin, ymax, npts
	  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text);
	xlog := CASE WHEN xk <> 'number' THEN false
	             WHEN spec #> '{x,log}' IS NOT NULL AND jsonb_typeof(spec #> '{x,log}') = 'boolean' THEN (spec #>> '{x,log}')::boolean
	             ELSE xmin > 0 AND xmax / xmin >= 10 END AND coalesce(xmin > 0, false);
	ylog := CASE WHEN spec #> '{y,log}' IS NOT NULL AND jsonb_typeof(spec #> '{y,log}') = 'boolean' THEN (spec #>> '{y,log}')::boolean
	             ELSE ymin > 0 AND ymax / ymin >= 10 END AND coalesce(ymin > 0, false);
	IF ylog THEN
		SELECT coalesce(jsonb_agg(jsonb_build_object('si', si, 'pi', pi, 'x', x, 'y', y,
		                                          'lo', CASE WHEN lo > 0 THEN lo END, 'hi', CASE WHEN hi > 0 THEN hi END, 'title', title)
		                       ORDER BY si, pi), '[]') INTO pj
		  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE y > 0;
	END IF;
	-- marks widen the x range (a mark on a point is within it anyway)
	SELECT least(xmin, min((m->>'x')::float8)), greatest(xmax, max((m->>'x')::float8)) INTO xmin, xmax
	  FROM jsonb_array_elements(coalesce(spec->'marks', '[]')) m
	 WHERE jsonb_typeof(m->'x') = 'number' AND (NOT xlog OR (m->>'x')::float8 > 0);

	-- Domains and ticks.
	IF npts > 0 THEN
		IF xlog THEN
			-- the data's range and a margin of 5%, at least a third of a decade
			step := greatest(log(xmax) - log(xmin), 0.35);
			x0 := (log(xmin) + log(xmax)) / 2 - step * 0.55; x1 := (log(xmin) + log(xmax)) / 2 + step * 0.55;
			SELECT jsonb_agg(jsonb_build_object('v', v, 'label', kbench_svg_number(10 ^ v)) ORDER BY v) INTO xticks
			  FROM (SELECT k + log(m) AS v FROM generate_series(floor(x0)::int, ceil(x1)::int) k,
			               unnest(CASE WHEN x1 - x0 <= 3.2 THEN ARRAY[1, 2, 5] ELSE ARRAY[1] END) m) q
			 WHERE v BETWEEN x0 AND x1;
		ELSIF xk = 'time' THEN
			IF xmax - xmin < 1 THEN xmin := xmin - 1800; xmax := xmax + 1800; END IF;
			step := (xmax - xmin) * 0.04; xmin := xmin - step; xmax := xmax + step;
			SELECT v INTO step FROM unnest(ARRAY[1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
			                                     43200, 86400, 172800, 604800, 1209600, 2592000, 7776000, 15552000, 31536000,
			                                     63072000, 157680000]::float8[]) v
			 WHERE v >= (xmax - xmin) / 6 ORDER BY v LIMIT 1;
			step := coalesce(step, 315360000);
			-- dates on every time axis (issue 29): over two days, ticks a day or more apart
			IF xmax - xmin > 172800 THEN step := greatest(step, 86400); END IF;
			IF step >= 2592000 THEN
				-- a month or more: ticks on the first of a month, every 1, 3, 6, 12 or 24 months
				x0 := xmin; x1 := xmax;
				SELECT jsonb_agg(jsonb_build_object('v', extract(epoch FROM ts), 'label', to_char(ts, 'Mon YYYY')) ORDER BY ts) INTO xticks
				  FROM generate_series(date_trunc('month', to_timestamp(xmin) AT TIME ZONE 'UTC'), to_timestamp(xmax) AT TIME ZONE 'UTC',
				                       '1 month'::interval) ts
				 WHERE (extract(year FROM ts) * 12 + extract(month FROM ts) - 1)::int
				       % (CASE WHEN step <= 2592000 THEN 1 WHEN step <= 7776000 THEN 3 WHEN step <= 15552000 THEN 6
				               WHEN step <= 31536000 THEN 12 ELSE 24 END) = 0
				   AND extract(epoch FROM ts) BETWEEN xmin AND xmax;
			ELSE
			x0 := floor(xmin / step) * step; x1 := ceil(xmax / step) * step;
			-- under two days: the time of day, and the date on the first tick
			-- and wherever the day changes
			SELECT jsonb_agg(jsonb_build_object('v', x0 + k * step,
			                 'label', to_char(to_timestamp(x0 + k * step) AT TIME ZONE 'UTC',
			                                  CASE WHEN step >= 86400 THEN 'YYYY-MM-DD'
			                                       WHEN k = 0 OR floor((x0 + k * step) / 86400) <> floor((x0 + (k - 1) * step) / 86400)
			                                       THEN 'YYYY-MM-DD HH24:MI' ELSE 'HH24:MI' END
			                                  || CASE WHEN step < 60 THEN ':SS' ELSE '' END)) ORDER BY k) INTO xticks
			  FROM generate_series(0, round((x1 - x0) / step)::int) k;
			END IF;
		ELSIF xk = 'index' THEN
			x0 := xmin - 0.5; x1 := xmax + 0.5;
		ELSIF spec #> '{x,ticks}' IS NOT NULL THEN
			-- explicit ticks on a linear axis: a margin of 6% (half a unit for one value)
			step := CASE WHEN xmax > xmin THEN (xmax - xmin) * 0.06 ELSE 0.5 END;
			x0 := xmin - step; x1 := xmax + step;
		ELSE
			IF xmax = xmin THEN xmin := xmin - greatest(abs(xmin) * 0.1, 1); xmax := xmax + greatest(abs(xmax) * 0.1, 1); END IF;
			step := (xmax - xmin) * 0.04; xmin := xmin - step; xmax := xmax + step;
			step := 10 ^ floor(log((xmax - xmin) / 5));
			step := step * CASE WHEN (xmax - xmin) / 5 / step <= 1 THEN 1 WHEN (xmax - xmin) / 5 / step <= 2 THEN 2
			                    WHEN (xmax - xmin) / 5 / step <= 5 THEN 5 ELSE 10 END;
			x0 := floor(xmin / step) * step; x1 := ceil(xmax / step) * step;
			SELECT jsonb_agg(jsonb_build_object('v', x0 + k * step, 'label', kbench_svg_number(x0 + k * step)) ORDER BY k) INTO xticks
			  FROM generate_series(0, round((x1 - x0) / step)::int) k;
		END IF;
		IF spec #> '{x,ticks}' IS NOT NULL AND jsonb_typeof(spec #> '{x,ticks}') = 'array' THEN
			-- explicit ticks, thinned to at most 12 labels
			SELECT jsonb_agg(jsonb_build_object('v', CASE WHEN xlog THEN log((e->>'v')::float8) ELSE (e->>'v')::float8 END,
			                                    'label', e->>'label') ORDER BY n) INTO xticks
			  FROM jsonb_array_elements(spec #> '{x,ticks}') WITH ORDINALITY t(e, n)
			 WHERE jsonb_typeof(e->'v') = 'number' AND (NOT xlog OR (e->>'v')::float8 > 0)
			   AND (n - 1) % greatest(1, ceil(jsonb_array_length(spec #> '{x,ticks}') / 12.0)::int) = 0;
		END IF;
		IF ylog THEN
			-- the data's range and a margin of 5%, at least a third of a decade
			step := greatest(log(ymax) - log(ymin), 0.35);
			y0 := (log(ymin) + log(ymax)) / 2 - step * 0.55; y1 := (log(ymin) + log(ymax)) / 2 + step * 0.55;
			SELECT jsonb_agg(jsonb_build_object('v', v, 'label', kbench_svg_number(10 ^ v)) ORDER BY v) INTO yticks
			  FROM (SELECT k + log(m) AS v FROM generate_series(floor(y0)::int, ceil(y1)::int) k,
			               unnest(CASE WHEN y1 - y0 <= 3.2 THEN ARRAY[1, 2, 5] ELSE ARRAY[1] END) m) q
			 WHERE v BETWEEN y0 AND y1;
		ELSE
			IF coalesce((spec #>> '{y,zero}')::boolean, true) AND ymin > 0 THEN ymin := 0; END IF;
			IF ymax = ymin THEN ymin := ymin - greatest(abs(ymin) * 0.1, 1); ymax := ymax + greatest(abs(ymax) * 0.1, 1); END IF;
			step := 10 ^ floor(log((ymax - ymin) / 5));
			step := step * CASE WHEN (ymax - ymin) / 5 / step <= 1 THEN 1 WHEN (ymax - ymin) / 5 / step <= 2 THEN 2
			                    WHEN (ymax - ymin) / 5 / step <= 5 THEN 5 ELSE 10 END;
			y0 := floor(ymin / step) * step; y1 := ceil(ymax / step) * step;
			SELECT jsonb_agg(jsonb_build_object('v', y0 + k * step, 'label', kbench_svg_number(y0 + k * step)) ORDER BY k) INTO yticks
			  FROM generate_series(0, round((y1 - y0) / step)::int) k;
		END IF;
	END IF;

	-- Duration axes (issue 29: never "1M µs"): y values in y.unit (ns, µs,
	-- ms, s), each tick in the unit that reads naturally: on a log axis each
	-- its own (20 µs, 1 ms, 1 s), on a linear one the unit of the largest.
	IF yunit IS NOT NULL AND yticks IS NOT NULL THEN
		IF ylog THEN
			SELECT jsonb_agg(jsonb_build_object('v', (e->>'v')::float8, 'label', kbench_svg_duration(10 ^ (e->>'v')::float8, yunit)) ORDER BY n) INTO yticks
			  FROM jsonb_array_elements(yticks) WITH ORDINALITY q(e, n);
		ELSE
			SELECT split_part(kbench_svg_duration(max(abs((e->>'v')::float8)), yunit), ' ', 2) INTO lbl FROM jsonb_array_elements(yticks) e;
			SELECT jsonb_agg(jsonb_build_object('v', (e->>'v')::float8,
			                                    'label', CASE WHEN (e->>'v')::float8 = 0 THEN '0' ELSE kbench_svg_duration((e->>'v')::float8, yunit, nullif(lbl, '')) END) ORDER BY n) INTO yticks
			  FROM jsonb_array_elements(yticks) WITH ORDINALITY q(e, n);
		END IF;
	END IF;

	-- Styles (issue 29): at most eight colours; past them, or per legend
	-- group, a dash pattern and another marker shape, so that no two series
	-- (up to 96) look alike.  With groups (series' "group": a device, say)
	-- and at most eight names, a name keeps its colour in every group and
	-- each group has its own dash pattern; else the n-th series has colour
	-- n mod 8 and pattern n div 8.  The shape is (colour + pattern) mod 6.
	WITH se AS (
		SELECT sn, coalesce(sr->>'name', '') AS nm, sr->>'group' AS gr
		  FROM jsonb_array_elements(coalesce(spec->'series', '[]')) WITH ORDINALITY q(sr, sn)
		 WHERE coalesce(sr->>'style', 'imported') <> 'roof'
	), f AS (
		SELECT sn, nm, gr, min(sn) OVER (PARTITION BY nm) AS fn, min(sn) OVER (PARTITION BY gr) AS fg,
		       row_number() OVER (ORDER BY sn) - 1 AS k FROM se
	), c AS (
		SELECT (SELECT bool_or(gr IS NOT NULL) AND count(DISTINCT nm) <= 8 AND count(DISTINCT (nm, gr)) = count(*) FROM se) AS by_group
	)
	SELECT coalesce(jsonb_object_agg(sn::text, CASE WHEN c.by_group THEN jsonb_build_array(dense_rank - 1, grank - 1)
	                                                 ELSE jsonb_build_array(k % 8, k / 8) END), '{}')
	  INTO sty
	  FROM (SELECT f.*, dense_rank() OVER (ORDER BY fn), dense_rank() OVER (ORDER BY fg) AS grank FROM f) f, c;

	-- The legend: named series (under a heading per group), then the kinds
	-- of marks present.
	SELECT coalesce(jsonb_agg(jsonb_build_object('name', sr->>'name', 'i', sn, 'style', coalesce(sr->>'style', 'imported'), 'group', sr->>'group',
	                                             'line', coalesce((sr->>'line')::boolean, true)) ORDER BY sn), '[]') INTO legend
	  FROM jsonb_array_elements(coalesce(spec->'series', '[]')) WITH ORDINALITY se(sr, sn)
	 WHERE coalesce(sr->>'name', '') <> '';
	SELECT legend || coalesce(jsonb_agg(jsonb_build_object('name', k, 'mark', k) ORDER BY k), '[]') INTO legend
	  FROM (SELECT DISTINCT coalesce(m->>'kind', 'note') AS k FROM jsonb_array_elements(coalesce(spec->'marks', '[]')) m
	         WHERE jsonb_typeof(m->'x') = 'number') q;
	-- columns per group: three, or two or one where a name is long
	SELECT jsonb_object_agg(g, c) INTO gcols
	  FROM (SELECT coalesce(e->>'group', '') AS g,
	               CASE WHEN max(length(e->>'name')) <= 26 THEN 3 WHEN max(length(e->>'name')) <= 44 THEN 2 ELSE 1 END AS c
	          FROM jsonb_array_elements(legend) e GROUP BY 1) q;

	-- The plot frame and axis titles.
	o := format('<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888888"/>', ml, mt, pw, ph)
	       || format('<text x="%s" y="%s" text-anchor="middle" fill="#111111">%s</text>', ml + pw / 2, ph0 - 14,
	                 kbench_svg_escape(coalesce(spec #>> '{x,label}', '') || CASE WHEN xlog THEN ' (log scale)' ELSE '' END))
	       || format('<text transform="translate(18 %s) rotate(-90)" text-anchor="middle" fill="#111111">%s</text>', round((mt + ph / 2)::numeric, 1),
	                 kbench_svg_escape(coalesce(spec #>> '{y,label}', '') || CASE WHEN ylog THEN ' (log scale)' ELSE '' END));

	IF npts = 0 THEN
		-- the empty sentence, wrapped at word boundaries to the plot's width
		-- (15 px text, 0.62 em a character), its lines centred
		lbl := coalesce(spec->>'empty', 'Nothing to draw: the selection holds no data.');
		lw := floor(pw / (15 * 0.62)) - 1;
		pts := '';
		kk := 0;
		FOR t IN SELECT wd FROM regexp_split_to_table(lbl, '\s+') WITH ORDINALITY q(wd, n) WHERE wd <> '' ORDER BY n LOOP
			IF pts <> '' AND length(pts) + 1 + length(t.wd) > lw THEN
				labs := labs || to_jsonb(pts); pts := t.wd;
			ELSE
				pts := concat_ws(' ', nullif(pts, ''), t.wd);
			END IF;
		END LOOP;
		labs := labs || to_jsonb(pts);
		FOR t IN SELECT e #>> '{}' AS line, n FROM jsonb_array_elements(labs) WITH ORDINALITY q(e, n) ORDER BY n LOOP
			o := o || format('<text x="%s" y="%s" text-anchor="middle" font-size="15" fill="#444444">%s</text>', ml + pw / 2,
			                 round((mt + ph / 2 + 20 * (t.n - 1) - 10 * (jsonb_array_length(labs) - 1))::numeric, 1),
			                 kbench_svg_escape(CASE WHEN length(t.line) > lw THEN left(t.line, lw::int - 1) || '…' ELSE t.line END));
		END LOOP;
		legend := '[]';
	ELSE

	-- Grid and tick labels.
	o := o || '<g stroke="#e4e4e4" stroke-width="1">';
	FOR t IN SELECT (e->>'v')::float8 AS v FROM jsonb_array_elements(coalesce(xticks, '[]')) e LOOP
		CONTINUE WHEN t.v < x0 - 1e-9 OR t.v > x1 + 1e-9;
		px := ml + (t.v - x0) / (x1 - x0) * pw;
		o := o || format('<line x1="%s" y1="%s" x2="%s" y2="%s"/>', round(px::numeric, 1), mt, round(px::numeric, 1), mt + ph);
	END LOOP;
	FOR t IN SELECT (e->>'v')::float8 AS v FROM jsonb_array_elements(coalesce(yticks, '[]')) e LOOP
		py := mt + ph - (t.v - y0) / (y1 - y0) * ph;
		o := o || format('<line x1="%s" y1="%s" x2="%s" y2="%s"/>', ml, round(py::numeric, 1), ml + pw, round(py::numeric, 1));
	END LOOP;
	o := o || '</g><g class="x-ticks" fill="#333333" font-size="11">';
	lx := NULL;      -- where the last x label ended: a label that would overlap it is left out
	FOR t IN SELECT (e->>'v')::float8 AS v, e->>'label' AS label FROM jsonb_array_elements(coalesce(xticks, '[]')) e ORDER BY (e->>'v')::float8 LOOP
		CONTINUE WHEN t.v < x0 - 1e-9 OR t.v > x1 + 1e-9;
		px := ml + (t.v - x0) / (x1 - x0) * pw;
		CONTINUE WHEN lx IS NOT NULL AND px - length(t.label) * 3.5 < lx + 6;
		o := o || format('<text x="%s" y="%s" text-anchor="middle">%s</text>', round(px::numeric, 1), mt + ph + 16, kbench_svg_escape(t.label));
		lx := px + length(t.label) * 3.5;
	END LOOP;
	o := o || '</g><g class="y-ticks" fill="#333333" font-size="11">';
	FOR t IN SELECT (e->>'v')::float8 AS v, e->>'label' AS label FROM jsonb_array_elements(coalesce(yticks, '[]')) e LOOP
		py := mt + ph - (t.v - y0) / (y1 - y0) * ph;
		o := o || format('<text x="%s" y="%s" text-anchor="end">%s</text>', ml - 6, round((py + 4)::numeric, 1), kbench_svg_escape(t.label));
	END LOOP;
	o := o || '</g>';

	-- Series: band, line, markers (each with its title).
	o := o || format('<g clip-path="url(#%s-c)">', cid);
	FOR s IN SELECT sr, sn::int AS i, coalesce(sr->>'style', 'imported') AS style, coalesce((sr->>'line')::boolean, true) AS line,
	                coalesce((sr->>'step')::boolean, false) AS step
	           FROM jsonb_array_elements(coalesce(spec->'series', '[]')) WITH ORDINALITY se(sr, sn) LOOP
		col := CASE WHEN s.style = 'roof' THEN '#555555' ELSE pal[coalesce((sty #>> ARRAY[s.i::text, '0'])::int, 0) + 1] END;
		cyc := coalesce((sty #>> ARRAY[s.i::text, '1'])::int, 0);
		shape := (coalesce((sty #>> ARRAY[s.i::text, '0'])::int, 0) + cyc) % 6;
		sw := CASE s.style WHEN 'ours' THEN '2.6' WHEN 'roof' THEN '1.4' ELSE '1.6' END;
		fill := CASE WHEN s.style = 'ours' THEN col ELSE '#ffffff' END;
		o := o || format('<g class="series"><title>%s</title>', kbench_svg_escape(coalesce(s.sr->>'name', '')));
		-- the spread as a band (or a whisker for a lone point)
		SELECT string_agg(format('%s,%s', round((ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw)::numeric, 1),
		                                  round((mt + ph - ((CASE WHEN ylog THEN log(hi) ELSE hi END) - y0) / (y1 - y0) * ph)::numeric, 1)), ' ' ORDER BY pi)
		       || ' ' ||
		       string_agg(format('%s,%s', round((ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw)::numeric, 1),
		                                  round((mt + ph - ((CASE WHEN ylog THEN log(lo) ELSE lo END) - y0) / (y1 - y0) * ph)::numeric, 1)), ' ' ORDER BY pi DESC),
		       count(*)::text
		  INTO band, lbl
		  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i AND lo IS NOT NULL AND hi IS NOT NULL;
		IF lbl::int >= 2 THEN
			o := o || format('<polygon points="%s" fill="%s" fill-opacity="0.16" stroke="none"/>', band, col);
		ELSIF lbl::int = 1 THEN
			SELECT format('<line x1="%1$s" y1="%2$s" x2="%1$s" y2="%3$s" stroke="%4$s" stroke-width="1.2"/>',
			              round((ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw)::numeric, 1),
			              round((mt + ph - ((CASE WHEN ylog THEN log(hi) ELSE hi END) - y0) / (y1 - y0) * ph)::numeric, 1),
			              round((mt + ph - ((CASE WHEN ylog THEN log(lo) ELSE lo END) - y0) / (y1 - y0) * ph)::numeric, 1), col) INTO band
			  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i AND lo IS NOT NULL AND hi IS NOT NULL;
			o := o || band;
		END IF;
		IF s.line THEN
			SELECT string_agg(CASE WHEN s.step AND prev_py IS NOT NULL THEN format('%s,%s ', px1, prev_py) ELSE '' END || format('%s,%s', px1, py1), ' ' ORDER BY pi),
			       count(*)
			  INTO pts, i
			  FROM (SELECT pi, px1, py1, lag(py1) OVER (ORDER BY pi) AS prev_py
			          FROM (SELECT pi, round((ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw)::numeric, 1) AS px1,
			                       round((mt + ph - ((CASE WHEN ylog THEN log(y) ELSE y END) - y0) / (y1 - y0) * ph)::numeric, 1) AS py1
			                  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i) q0) q;
			IF i >= 2 THEN
				o := o || format('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"%s/>', pts, col, sw,
				                 CASE WHEN s.style = 'roof' THEN ' stroke-dasharray="6 4"'
				                      WHEN dashes[cyc % 4 + 1] <> '' THEN format(' stroke-dasharray="%s"', dashes[cyc % 4 + 1]) ELSE '' END);
			END IF;
		END IF;
		IF s.style <> 'roof' THEN
			FOR p IN SELECT (ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw) AS px,
			                (mt + ph - ((CASE WHEN ylog THEN log(y) ELSE y END) - y0) / (y1 - y0) * ph) AS py, title
			           FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i ORDER BY pi LOOP
				o := o || kbench_svg_marker(shape, p.px, p.py, fill, col, coalesce(p.title, ''));
			END LOOP;
		END IF;
		IF s.sr ? 'label_end' THEN
			SELECT (ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw),
			       (mt + ph - ((CASE WHEN ylog THEN log(y) ELSE y END) - y0) / (y1 - y0) * ph) INTO px, py
			  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i ORDER BY pi DESC LIMIT 1;
			IF px IS NOT NULL THEN
				labs := labs || jsonb_build_object('kind', 'end', 'px', px, 'py', py, 'col', col, 'text', s.sr->>'label_end');
			END IF;
		END IF;
		o := o || '</g>';
	END LOOP;

	-- Marks: a dashed vertical line at x, a ring at (x, y) when given.
	FOR p IN SELECT coalesce(m->>'kind', 'note') AS kind, (m->>'x')::float8 AS x, (m->>'y')::float8 AS y,
	                m->>'label' AS label, coalesce(m->>'title', m->>'label') AS title
	           FROM jsonb_array_elements(coalesce(spec->'marks', '[]')) WITH ORDINALITY e(m, n)
	          WHERE jsonb_typeof(m->'x') = 'number' AND (NOT xlog OR (m->>'x')::float8 > 0) ORDER BY n LOOP
		col := coalesce(mark_colour->>p.kind, '#666666');
		px := ml + ((CASE WHEN xlog THEN log(p.x) ELSE p.x END) - x0) / (x1 - x0) * pw;
		o := o || format('<g><title>%s</title><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.4" stroke-dasharray="%s"/>',
		                 kbench_svg_escape(p.kind || ': ' || coalesce(p.title, '')), round(px::numeric, 1), mt, round(px::numeric, 1), mt + ph, col,
		                 CASE p.kind WHEN 'regression' THEN '5 3' WHEN 'change point' THEN '2 3' ELSE '8 3 2 3' END);
		IF p.y IS NOT NULL AND (NOT ylog OR p.y > 0) THEN
			py := mt + ph - ((CASE WHEN ylog THEN log(p.y) ELSE p.y END) - y0) / (y1 - y0) * ph;
			o := o || format('<circle cx="%s" cy="%s" r="8" fill="none" stroke="%s" stroke-width="2"/>', round(px::numeric, 1), round(py::numeric, 1), col);
		END IF;
		IF p.label IS NOT NULL THEN
			labs := labs || jsonb_build_object('kind', 'mark', 'px', px, 'col', col, 'text', p.label);
		END IF;
		o := o || '</g>';
	END LOOP;

	-- Labels (issue 29: they never overlap): placed in order (the series'
	-- end labels, then the marks'), each at the first of its candidate
	-- places whose box (11 px text, 0.64 em a character) meets no label
	-- placed before it and stays in the plot: an end label beside its last
	-- point, then above and below it; a mark's label in the rows down from
	-- the plot's top on the side of its line with room, then on the other.  One with no free place
	-- is left out (its mark keeps it as a title), and the legend says how many.
	placed := '[]';
	FOR t IN SELECT e, n FROM jsonb_array_elements(labs) WITH ORDINALITY q(e, n) ORDER BY (e->>'kind') = 'mark', n LOOP
		lw := length(t.e->>'text') * 11 * 0.64;
		px := (t.e->>'px')::float8;
		lbl := NULL;
		FOR kk IN 0 .. CASE WHEN t.e->>'kind' = 'end' THEN 13 ELSE 2 * greatest(1, floor((ph - 8) / 13)::int) - 1 END LOOP
			IF t.e->>'kind' = 'end' THEN
				-- beside the point (the side with room first), then 13 px steps above and below
				i := kk % 2;                         -- 0: the preferred side, 1: the other
				ly := (t.e->>'py')::float8 - 5 + CASE WHEN kk / 2 = 0 THEN 0 WHEN (kk / 2) % 2 = 1 THEN -13 * ((kk / 2 + 1) / 2) ELSE 13 * ((kk / 2 + 1) / 2) END;
				anchor := CASE WHEN (px < ml + pw * 0.3) = (i = 0) THEN 'start' ELSE 'end' END;
			ELSE
				-- the rows down from the top on the side with room, then on the other
				i := kk / greatest(1, floor((ph - 8) / 13)::int);
				ly := mt + 14 + 13 * (kk % greatest(1, floor((ph - 8) / 13)::int));
				anchor := CASE WHEN (px > ml + pw * 0.7) = (i = 0) THEN 'end' ELSE 'start' END;
			END IF;
			lx := px + CASE WHEN anchor = 'start' THEN 4 ELSE -4 END;
			bx0 := CASE WHEN anchor = 'start' THEN lx ELSE lx - lw END;
			CONTINUE WHEN bx0 < ml + 1 OR bx0 + lw > ml + pw - 1 OR ly - 9 < mt + 1 OR ly + 3 > mt + ph - 1;
			CONTINUE WHEN EXISTS (SELECT 1 FROM jsonb_array_elements(placed) b
			                       WHERE bx0 < (b->>'x1')::float8 + 6 AND bx0 + lw > (b->>'x0')::float8 - 6
			                         AND ly - 9 < (b->>'y1')::float8 + 1 AND ly + 3 > (b->>'y0')::float8 - 1);
			placed := placed || jsonb_build_object('x0', bx0, 'x1', bx0 + lw, 'y0', ly - 9, 'y1', ly + 3);
			lbl := format('<text x="%s" y="%s" font-size="11" fill="%s"%s>%s</text>', round(lx::numeric, 1), round(ly::numeric, 1), t.e->>'col',
			              CASE WHEN anchor = 'end' THEN ' text-anchor="end"' ELSE '' END, kbench_svg_escape(t.e->>'text'));
			EXIT;
		END LOOP;
		IF lbl IS NULL THEN
			dropped := dropped + 1;
		ELSE
			o := o || lbl;
		END IF;
	END LOOP;
	o := o || '</g>';
	END IF;

	-- The legend under the plot: entries ncol a row (per group: three, or
	-- fewer for long names); with groups, each group starts a row under its
	-- heading (issue 29: 14-16 entries stay readable).
	lg := '';
	ly := ph0 + 8 - 20;
	ncol := 1;
	kk := 1000;            -- entries in the current row (ncol or more: start a new one)
	prev_group := NULL;
	FOR t IN SELECT e, n::int FROM jsonb_array_elements(legend) WITH ORDINALITY q(e, n) LOOP
		IF t.n > 1 AND (t.e->>'group') IS DISTINCT FROM prev_group THEN
			kk := 1000;
		END IF;
		ncol := coalesce((gcols->>coalesce(t.e->>'group', ''))::int, 1);
		kk := least(kk, ncol);
		IF kk >= ncol THEN
			ly := ly + 20; kk := 0;
			IF t.e->>'group' IS NOT NULL AND (t.n = 1 OR (t.e->>'group') IS DISTINCT FROM prev_group) THEN
				lg := lg || format('<text x="%s" y="%s" font-weight="bold" fill="#333333">%s</text>', ml, round((ly + 5)::numeric, 1),
				                   kbench_svg_escape(CASE WHEN length(t.e->>'group') > (pw / 8)::int THEN left(t.e->>'group', (pw / 8)::int - 1) || '…' ELSE t.e->>'group' END));
				ly := ly + 20;
			END IF;
		END IF;
		prev_group := t.e->>'group';
		lx := ml + kk * (pw / ncol) + CASE WHEN t.e->>'group' IS NOT NULL THEN 12 ELSE 0 END;
		kk := kk + 1;
		IF t.e ? 'mark' THEN
			col := coalesce(mark_colour->>(t.e->>'mark'), '#666666');
			lg := lg || format('<g><title>%1$s</title><line x1="%2$s" y1="%3$s" x2="%2$s" y2="%4$s" stroke="%5$s" stroke-width="1.4" stroke-dasharray="%6$s"/>',
			                 kbench_svg_escape(t.e->>'name'), round((lx + 11)::numeric, 1), round((ly - 6)::numeric, 1), round((ly + 8)::numeric, 1), col,
			                 CASE t.e->>'mark' WHEN 'regression' THEN '5 3' WHEN 'change point' THEN '2 3' ELSE '8 3 2 3' END);
		ELSE
			i := (t.e->>'i')::int;
			col := CASE WHEN t.e->>'style' = 'roof' THEN '#555555' ELSE pal[coalesce((sty #>> ARRAY[i::text, '0'])::int, 0) + 1] END;
			cyc := coalesce((sty #>> ARRAY[i::text, '1'])::int, 0);
			shape := (coalesce((sty #>> ARRAY[i::text, '0'])::int, 0) + cyc) % 6;
			fill := CASE WHEN t.e->>'style' = 'ours' THEN col ELSE '#ffffff' END;
			lg := lg || format('<g class="legend-entry"><title>%s</title>', kbench_svg_escape(t.e->>'name'))
			       || CASE WHEN (t.e->>'line')::boolean THEN
			            format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>', round(lx::numeric, 1), round((ly + 1)::numeric, 1),
			                   round((lx + 22)::numeric, 1), round((ly + 1)::numeric, 1), col,
			                   CASE t.e->>'style' WHEN 'ours' THEN '2.6' WHEN 'roof' THEN '1.4' ELSE '1.6' END,
			                   CASE WHEN t.e->>'style' = 'roof' THEN ' stroke-dasharray="6 4"'
			                        WHEN dashes[cyc % 4 + 1] <> '' THEN format(' stroke-dasharray="%s"', dashes[cyc % 4 + 1]) ELSE '' END)
			          ELSE '' END
			       || CASE WHEN t.e->>'style' = 'roof' THEN '' ELSE kbench_svg_marker(shape, lx + 11, ly + 1, fill, col) END;
		END IF;
		lg := lg || format('<text x="%s" y="%s" fill="#111111">%s</text></g>', round((lx + 28)::numeric, 1), round((ly + 5)::numeric, 1),
		                   kbench_svg_escape(CASE WHEN length(t.e->>'name') > ((pw / ncol - 12) / 7.5)::int - 5
		                                         THEN left(t.e->>'name', ((pw / ncol - 12) / 7.5)::int - 6) || '…' ELSE t.e->>'name' END));
	END LOOP;
	IF dropped > 0 THEN
		ly := ly + 20;
		lg := lg || format('<text x="%s" y="%s" font-style="italic" fill="#444444">%s</text>', ml, round((ly + 5)::numeric, 1),
		                   format('%s %s left out where %s would overlap (hover the %s)', dropped, CASE WHEN dropped = 1 THEN 'label' ELSE 'labels' END,
		                          CASE WHEN dropped = 1 THEN 'it' ELSE 'they' END, CASE WHEN dropped = 1 THEN 'mark' ELSE 'marks' END));
	END IF;
	h := ph0 + CASE WHEN lg <> '' THEN round(ly)::int + 20 - ph0 ELSE 0 END;

	o := format('<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="12" role="img" aria-labelledby="%s-t">',
	            w, h, w, h, cid)
	  || format('<title id="%s-t">%s</title>', cid, kbench_svg_escape(concat_ws(' — ', spec->>'title', spec->>'subtitle')))
	  || format('<rect width="%s" height="%s" fill="#ffffff"/>', w, h)
	  || format('<text x="%s" y="24" font-size="16" font-weight="bold" fill="#111111">%s</text>', ml,
	            kbench_svg_escape(CASE WHEN length(spec->>'title') > (w - ml - 8) / 10 THEN left(spec->>'title', (w - ml - 8) / 10 - 1) || '…' ELSE spec->>'title' END))
	  || CASE WHEN spec ? 'subtitle' THEN format('<text x="%s" y="44" fill="#444444">%s</text>', ml,
	            kbench_svg_escape(CASE WHEN length(spec->>'subtitle') > (w - ml - 8) / 7 THEN left(spec->>'subtitle', (w - ml - 8) / 7 - 1) || '…' ELSE spec->>'subtitle' END)) ELSE '' END
	  || format('<defs><clipPath id="%s-c"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>', cid, ml - 6, mt - 6, pw + 12, ph + 12)
	  || o || lg;
	-- one element a line, so that two versions of a chart diff line by line
	RETURN regexp_replace(o, '><(/?g[ >]|text |line |rect |polyline |polygon |circle |path |defs>)', E'>\n<\\1', 'g') || E'\n</svg>';
END $$;
COMMENT ON FUNCTION kbench_chart(jsonb) IS 'an SVG chart drawn from a jsonb spec (title, x, y, series of points with optional bands, marks); deterministic bytes';
