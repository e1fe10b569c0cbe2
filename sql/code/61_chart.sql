--------------------------------------------------------------------------
-- kbench_chart(spec): one chart from a jsonb description
--------------------------------------------------------------------------
-- spec:
--   title, subtitle, empty (the sentence shown when nothing is drawn),
--   width (800), height (440: the plot part; the legend adds rows below),
--   x, y: {label, log (true/false; absent: log when the values span a decade
--          or more), kind ('number', 'time': epoch seconds, 'index'),
--          ticks ([{v, label}]: explicit ticks), zero (y: start at 0 when linear)}
--   series: [{name, style ('imported', 'ours', 'roof'), line (true), step
--            (false), label_end (text written at the last point),
--            points: [{x, y, lo, hi, title}]}]
--   marks: [{x, y, kind ('regression', 'change point', 'alert', 'note'), label, title}]
CREATE OR REPLACE FUNCTION kbench_chart(spec jsonb) RETURNS text
	LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	pal text[] := ARRAY['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
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
	nleg int;
	rows int;
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
			IF xmax - xmin < 1 THEN xmin := xmin - 43200; xmax := xmax + 43200; END IF;
			step := (xmax - xmin) * 0.04; xmin := xmin - step; xmax := xmax + step;
			SELECT v INTO step FROM unnest(ARRAY[1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
			                                     43200, 86400, 172800, 604800, 1209600, 2592000, 7776000, 15552000, 31536000,
			                                     63072000, 157680000]::float8[]) v
			 WHERE v >= (xmax - xmin) / 6 ORDER BY v LIMIT 1;
			step := coalesce(step, 315360000);
			IF step >= 2592000 THEN
				-- a month or more: ticks on the first of a month, every 1, 3, 6, 12 or 24 months
				x0 := xmin; x1 := xmax;
				SELECT jsonb_agg(jsonb_build_object('v', extract(epoch FROM ts), 'label', to_char(ts, 'YYYY-MM')) ORDER BY ts) INTO xticks
				  FROM generate_series(date_trunc('month', to_timestamp(xmin) AT TIME ZONE 'UTC'), to_timestamp(xmax) AT TIME ZONE 'UTC',
				                       '1 month'::interval) ts
				 WHERE (extract(year FROM ts) * 12 + extract(month FROM ts) - 1)::int
				       % (CASE WHEN step <= 2592000 THEN 1 WHEN step <= 7776000 THEN 3 WHEN step <= 15552000 THEN 6
				               WHEN step <= 31536000 THEN 12 ELSE 24 END) = 0
				   AND extract(epoch FROM ts) BETWEEN xmin AND xmax;
			ELSE
			x0 := floor(xmin / step) * step; x1 := ceil(xmax / step) * step;
			SELECT jsonb_agg(jsonb_build_object('v', x0 + k * step,
			                 'label', to_char(to_timestamp(x0 + k * step) AT TIME ZONE 'UTC',
			                                  CASE WHEN step >= 86400 THEN 'YYYY-MM-DD' WHEN x1 - x0 > 86400 THEN 'MM-DD HH24:MI'
			                                       WHEN step >= 60 THEN 'HH24:MI' ELSE 'HH24:MI:SS' END)) ORDER BY k) INTO xticks
			  FROM generate_series(0, round((x1 - x0) / step)::int) k;
			END IF;
		ELSIF xk = 'index' OR spec #> '{x,ticks}' IS NOT NULL THEN
			x0 := xmin - 0.5; x1 := xmax + 0.5;
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

	-- The legend: named series, then the kinds of marks present.
	SELECT coalesce(jsonb_agg(jsonb_build_object('name', sr->>'name', 'i', sn, 'style', coalesce(sr->>'style', 'imported'),
	                                             'line', coalesce((sr->>'line')::boolean, true)) ORDER BY sn), '[]') INTO legend
	  FROM jsonb_array_elements(coalesce(spec->'series', '[]')) WITH ORDINALITY se(sr, sn)
	 WHERE coalesce(sr->>'name', '') <> '';
	SELECT legend || coalesce(jsonb_agg(jsonb_build_object('name', k, 'mark', k) ORDER BY k), '[]') INTO legend
	  FROM (SELECT DISTINCT coalesce(m->>'kind', 'note') AS k FROM jsonb_array_elements(coalesce(spec->'marks', '[]')) m
	         WHERE jsonb_typeof(m->'x') = 'number') q;
	nleg := jsonb_array_length(legend);
	SELECT CASE WHEN max(length(e->>'name')) <= 26 THEN 3 WHEN max(length(e->>'name')) <= 44 THEN 2 ELSE 1 END INTO ncol
	  FROM jsonb_array_elements(legend) e;
	rows := ceil(nleg / ncol::float8);
	h := ph0 + CASE WHEN rows > 0 THEN 8 + rows * 20 ELSE 0 END;

	o := format('<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="12" role="img" aria-labelledby="%s-t">',
	            w, h, w, h, cid)
	  || format('<title id="%s-t">%s</title>', cid, kbench_svg_escape(concat_ws(' — ', spec->>'title', spec->>'subtitle')))
	  || format('<rect width="%s" height="%s" fill="#ffffff"/>', w, h)
	  || format('<text x="%s" y="24" font-size="16" font-weight="bold" fill="#111111">%s</text>', ml,
	            kbench_svg_escape(CASE WHEN length(spec->>'title') > (w - ml - 8) / 10 THEN left(spec->>'title', (w - ml - 8) / 10 - 1) || '…' ELSE spec->>'title' END))
	  || CASE WHEN spec ? 'subtitle' THEN format('<text x="%s" y="44" fill="#444444">%s</text>', ml,
	            kbench_svg_escape(CASE WHEN length(spec->>'subtitle') > (w - ml - 8) / 7 THEN left(spec->>'subtitle', (w - ml - 8) / 7 - 1) || '…' ELSE spec->>'subtitle' END)) ELSE '' END
	  || format('<defs><clipPath id="%s-c"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>', cid, ml - 6, mt - 6, pw + 12, ph + 12);

	-- The plot frame and axis titles.
	o := o || format('<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888888"/>', ml, mt, pw, ph)
	       || format('<text x="%s" y="%s" text-anchor="middle" fill="#111111">%s</text>', ml + pw / 2, ph0 - 14,
	                 kbench_svg_escape(coalesce(spec #>> '{x,label}', '') || CASE WHEN xlog THEN ' (log scale)' ELSE '' END))
	       || format('<text transform="translate(18 %s) rotate(-90)" text-anchor="middle" fill="#111111">%s</text>', round((mt + ph / 2)::numeric, 1),
	                 kbench_svg_escape(coalesce(spec #>> '{y,label}', '') || CASE WHEN ylog THEN ' (log scale)' ELSE '' END));

	IF npts = 0 THEN
		o := o || format('<text x="%s" y="%s" text-anchor="middle" font-size="15" fill="#444444">%s</text>', ml + pw / 2, round((mt + ph / 2)::numeric, 1),
		                 kbench_svg_escape(coalesce(spec->>'empty', 'Nothing to draw: the selection holds no data.')));
		RETURN regexp_replace(o, '><(/?g[ >]|text |line |rect |polyline |polygon |circle |path |defs>)', E'>\n<\\1', 'g') || E'\n</svg>';
	END IF;

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
	o := o || '</g><g fill="#333333" font-size="11">';
	lx := NULL;      -- where the last x label ended: a label that would overlap it is left out
	FOR t IN SELECT (e->>'v')::float8 AS v, e->>'label' AS label FROM jsonb_array_elements(coalesce(xticks, '[]')) e ORDER BY (e->>'v')::float8 LOOP
		CONTINUE WHEN t.v < x0 - 1e-9 OR t.v > x1 + 1e-9;
		px := ml + (t.v - x0) / (x1 - x0) * pw;
		CONTINUE WHEN lx IS NOT NULL AND px - length(t.label) * 3.4 < lx + 6;
		o := o || format('<text x="%s" y="%s" text-anchor="middle">%s</text>', round(px::numeric, 1), mt + ph + 16, kbench_svg_escape(t.label));
		lx := px + length(t.label) * 3.4;
	END LOOP;
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
		col := CASE WHEN s.style = 'roof' THEN '#555555' ELSE pal[(s.i - 1) % 7 + 1] END;
		shape := (s.i - 1) % 5;
		sw := CASE s.style WHEN 'ours' THEN '2.6' WHEN 'roof' THEN '1.4' ELSE '1.6' END;
		fill := CASE WHEN s.style = 'ours' THEN col ELSE '#ffffff' END;
		o := o || format('<g><title>%s</title>', kbench_svg_escape(coalesce(s.sr->>'name', '')));
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
				                 CASE WHEN s.style = 'roof' THEN ' stroke-dasharray="6 4"' ELSE '' END);
			END IF;
		END IF;
		IF s.style <> 'roof' THEN
			FOR p IN SELECT (ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw) AS px,
			                (mt + ph - ((CASE WHEN ylog THEN log(y) ELSE y END) - y0) / (y1 - y0) * ph) AS py, title
			           FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i ORDER BY pi LOOP
				o := o || CASE shape
					WHEN 0 THEN format('<circle cx="%s" cy="%s" r="3.6"', round(p.px::numeric, 1), round(p.py::numeric, 1))
					WHEN 1 THEN format('<rect x="%s" y="%s" width="6.6" height="6.6"', round((p.px - 3.3)::numeric, 1), round((p.py - 3.3)::numeric, 1))
					WHEN 2 THEN format('<path d="M%s,%sl4,7h-8z"', round(p.px::numeric, 1), round((p.py - 4.4)::numeric, 1))
					WHEN 3 THEN format('<path d="M%s,%sl4.4,4.4l-4.4,4.4l-4.4,-4.4z"', round(p.px::numeric, 1), round((p.py - 4.4)::numeric, 1))
					ELSE format('<path d="M%s,%sl4,-7h-8z"', round(p.px::numeric, 1), round((p.py + 4.4)::numeric, 1)) END
				  || format(' fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title>', fill, col, kbench_svg_escape(p.title))
				  || CASE shape WHEN 0 THEN '</circle>' WHEN 1 THEN '</rect>' ELSE '</path>' END;
			END LOOP;
		END IF;
		IF s.sr ? 'label_end' THEN
			SELECT (ml + ((CASE WHEN xlog THEN log(x) ELSE x END) - x0) / (x1 - x0) * pw),
			       (mt + ph - ((CASE WHEN ylog THEN log(y) ELSE y END) - y0) / (y1 - y0) * ph) INTO px, py
			  FROM jsonb_to_recordset(pj) AS cp(si int, pi int, x float8, y float8, lo float8, hi float8, title text) WHERE si = s.i ORDER BY pi DESC LIMIT 1;
			IF px IS NOT NULL THEN
				o := o || format('<text x="%s" y="%s" text-anchor="%s" font-size="11" fill="%s">%s</text>',
				                 round((px + CASE WHEN px < ml + pw * 0.3 THEN 4 ELSE -4 END)::numeric, 1),
				                 round((py - 5)::numeric, 1), CASE WHEN px < ml + pw * 0.3 THEN 'start' ELSE 'end' END, col, kbench_svg_escape(s.sr->>'label_end'));
			END IF;
		END IF;
		o := o || '</g>';
	END LOOP;

	-- Marks: a dashed vertical line at x, a ring at (x, y) when given.
	FOR p IN SELECT coalesce(m->>'kind', 'note') AS kind, (m->>'x')::float8 AS x, (m->>'y')::float8 AS y,
	                m->>'label' AS label, coalesce(m->>'title', m->>'label') AS title,
	                row_number() OVER (PARTITION BY (m->>'x')::float8 ORDER BY n) - 1 AS same_x
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
			o := o || format('<text x="%s" y="%s" font-size="11" fill="%s"%s>%s</text>', round((px + CASE WHEN px > ml + pw * 0.7 THEN -4 ELSE 4 END)::numeric, 1),
			                 mt + 14 + 13 * (p.same_x % 8), col, CASE WHEN px > ml + pw * 0.7 THEN ' text-anchor="end"' ELSE '' END, kbench_svg_escape(p.label));
		END IF;
		o := o || '</g>';
	END LOOP;
	o := o || '</g>';

	-- The legend, three entries a row under the plot.
	FOR t IN SELECT e, n::int FROM jsonb_array_elements(legend) WITH ORDINALITY q(e, n) LOOP
		lx := ml + ((t.n - 1) % ncol) * (pw / ncol);
		ly := ph0 + 8 + ((t.n - 1) / ncol) * 20;
		IF t.e ? 'mark' THEN
			col := coalesce(mark_colour->>(t.e->>'mark'), '#666666');
			o := o || format('<g><title>%1$s</title><line x1="%2$s" y1="%3$s" x2="%2$s" y2="%4$s" stroke="%5$s" stroke-width="1.4" stroke-dasharray="%6$s"/>',
			                 kbench_svg_escape(t.e->>'name'), round((lx + 11)::numeric, 1), round((ly - 6)::numeric, 1), round((ly + 8)::numeric, 1), col,
			                 CASE t.e->>'mark' WHEN 'regression' THEN '5 3' WHEN 'change point' THEN '2 3' ELSE '8 3 2 3' END);
		ELSE
			i := (t.e->>'i')::int;
			col := CASE WHEN t.e->>'style' = 'roof' THEN '#555555' ELSE pal[(i - 1) % 7 + 1] END;
			shape := (i - 1) % 5;
			fill := CASE WHEN t.e->>'style' = 'ours' THEN col ELSE '#ffffff' END;
			o := o || format('<g><title>%s</title>', kbench_svg_escape(t.e->>'name'))
			       || CASE WHEN (t.e->>'line')::boolean THEN
			            format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>', round(lx::numeric, 1), round((ly + 1)::numeric, 1),
			                   round((lx + 22)::numeric, 1), round((ly + 1)::numeric, 1), col,
			                   CASE t.e->>'style' WHEN 'ours' THEN '2.6' WHEN 'roof' THEN '1.4' ELSE '1.6' END,
			                   CASE WHEN t.e->>'style' = 'roof' THEN ' stroke-dasharray="6 4"' ELSE '' END)
			          ELSE '' END
			       || CASE WHEN t.e->>'style' = 'roof' THEN ''
			               ELSE CASE shape
			                 WHEN 0 THEN format('<circle cx="%s" cy="%s" r="3.6"', round((lx + 11)::numeric, 1), round((ly + 1)::numeric, 1))
			                 WHEN 1 THEN format('<rect x="%s" y="%s" width="6.6" height="6.6"', round((lx + 7.7)::numeric, 1), round((ly - 2.3)::numeric, 1))
			                 WHEN 2 THEN format('<path d="M%s,%sl4,7h-8z"', round((lx + 11)::numeric, 1), round((ly - 3.4)::numeric, 1))
			                 WHEN 3 THEN format('<path d="M%s,%sl4.4,4.4l-4.4,4.4l-4.4,-4.4z"', round((lx + 11)::numeric, 1), round((ly - 3.4)::numeric, 1))
			                 ELSE format('<path d="M%s,%sl4,-7h-8z"', round((lx + 11)::numeric, 1), round((ly + 5.4)::numeric, 1)) END
			                 || format(' fill="%s" stroke="%s" stroke-width="1.5"/>', fill, col) END;
		END IF;
		o := o || format('<text x="%s" y="%s" fill="#111111">%s</text></g>', round((lx + 28)::numeric, 1), round((ly + 5)::numeric, 1),
		                 kbench_svg_escape(CASE WHEN length(t.e->>'name') > (pw / ncol / 7)::int - 5
		                                       THEN left(t.e->>'name', (pw / ncol / 7)::int - 6) || '…' ELSE t.e->>'name' END));
	END LOOP;
	-- one element a line, so that two versions of a chart diff line by line
	RETURN regexp_replace(o, '><(/?g[ >]|text |line |rect |polyline |polygon |circle |path |defs>)', E'>\n<\\1', 'g') || E'\n</svg>';
END $$;
COMMENT ON FUNCTION kbench_chart(jsonb) IS 'an SVG chart drawn from a jsonb spec (title, x, y, series of points with optional bands, marks); deterministic bytes';
